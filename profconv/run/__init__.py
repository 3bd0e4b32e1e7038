"""Running stage: models, data, the CPU reference and the GPU variants, timed and checked."""
