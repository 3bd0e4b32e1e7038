"""One module per CLI noun: validate options, call the library, hand results to a renderer."""
