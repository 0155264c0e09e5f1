"""nadcore: the library behind nadbook, a reproduction of *Neural Anisotropy Directions*."""

__version__ = "0.1.0"
