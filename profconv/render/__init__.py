"""Rendering stage: frames and typed options in, terminal or file output out."""
