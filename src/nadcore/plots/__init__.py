"""One function per paper figure, one module per chapter (`plots.fourier`, `plots.pooling`, ...)."""
