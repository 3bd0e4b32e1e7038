"""CUDA sources of the convolution variants, loaded as package resources."""
