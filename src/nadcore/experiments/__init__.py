"""The experiments layer: one module per chapter of the book (`ch1_fourier` ... `ch6_antialias`).

Each module runs its chapter's heavy computations on top of the primitives (`nadcore.fourier`,
`data`, `models`, `train`, `stacked`, `nads`, `pooling`, `cifar`, `store`, `sweeps`, `seeds`),
importing them at the top. A later chapter may use an earlier one (Chapters 4 and 5 read the NADs
that `ch3_nads.load_nads` gives); nothing below this layer imports it.
"""
