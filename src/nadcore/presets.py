"""Scale presets of every chapter, in one place.

`smoke` runs on a laptop CPU in minutes, `paper` uses the published settings, `medium` sits
between the two. Notebooks call `preset(chapter, scale)` and never hard-code these numbers.
"""

import copy

SCALES = ("smoke", "medium", "paper")

PRESETS = {
    "fourier": {
        # fig1: test accuracy on D(v) per Fourier direction; fig2: iterations until the running mean of
        # the last `window` batch losses is below `threshold` (sigma = 0.5); fig3: fig1 without pooling.
        # Recipe values may be dicts by architecture. The papers give LeNet's recipe only (20 epochs,
        # max_lr 0.5); the deep networks' max_lr 0.05 is ours (they reach ~100% train accuracy).
        "smoke": {"archs": ["logreg", "lenet"], "grid": {"name": "coarse", "step": 4, "limit": 8},
                  "n": 3000, "sigma": 0.75, "eps": 1.0, "kind": "sin", "epochs": 4, "max_lr": 0.5,
                  "momentum": 0.0, "weight_decay": 0.0, "batch_size": 128,
                  "fig2": {"archs": ["logreg", "lenet"], "grid": {"name": "coarse", "step": 4, "limit": 8},
                           "n": 1000, "sigma": 0.5, "epochs": 30, "threshold": 0.3, "window": 4},
                  "fig3": {"archs": ["lenet"], "grid": {"name": "coarse", "step": 8, "limit": 8}}},
        "medium": {"archs": ["logreg", "lenet", "resnet18"], "grid": {"name": "coarse", "step": 2, "limit": 8},
                   "n": 10000, "sigma": 3.0, "eps": 1.0, "kind": "sin", "epochs": 20,
                   "max_lr": {"logreg": 0.5, "lenet": 0.5, "resnet18": 0.05},
                   "momentum": 0.0, "weight_decay": 0.0, "batch_size": 128,
                   "fig2": {"archs": ["logreg", "lenet", "resnet18"], "grid": {"name": "coarse", "step": 4, "limit": 8},
                            "n": 10000, "sigma": 0.5, "epochs": 20, "threshold": 0.05, "window": 20},
                   "fig3": {"archs": ["lenet", "resnet18"], "grid": {"name": "coarse", "step": 4, "limit": 8}}},
        "paper": {"archs": ["logreg", "lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121"],
                  "grid": {"name": "paper"}, "n": 10000, "sigma": 3.0, "eps": 1.0, "kind": "sin", "epochs": 20,
                  "max_lr": {"logreg": 0.5, "lenet": 0.5, "vgg11": 0.05, "vgg11_bn": 0.05, "resnet18": 0.05,
                             "densenet121": 0.05},
                  "momentum": 0.0, "weight_decay": 0.0, "batch_size": 128,
                  "fig2": {"archs": ["lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121"],
                           "grid": {"name": "paper"},
                           "n": 10000, "sigma": 0.5, "epochs": 20, "threshold": 0.05, "window": 20},
                  "fig3": {"archs": ["lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121"],
                           "grid": {"name": "paper"}}},
    },
    "pooling": {
        # fig4a: Theorem 1 in closed form (cheap at any scale); fig4b: the linear model of Sec. 2.2;
        # sim_*: Monte-Carlo check of Theorem 1 through avg_pool1d; hess_*: Monte-Carlo check of Lemma 1.
        "smoke": {"D": 128, "S": 4, "eps": 1.0, "sigma": 1.0,
                  "train_ls": [0, 16, 24, 28], "train_seeds": [0, 1, 2], "train_n": 500, "train_steps": 300,
                  "train_lr": 0.2, "train_sigma": 0.5, "init_std": 0.1,
                  "sim_D": 64, "sim_ls": [1, 3, 5, 7, 9, 11, 13, 15], "sim_n_train": 10000, "sim_n_test": 20000,
                  "hess_D": 16, "hess_l": 3, "hess_n": 10000},
        "medium": {"D": 128, "S": 4, "eps": 1.0, "sigma": 1.0,
                   "train_ls": [0, 8, 16, 20, 24, 28], "train_seeds": [0, 1, 2], "train_n": 1000, "train_steps": 600,
                   "train_lr": 0.2, "train_sigma": 0.5, "init_std": 0.1,
                   "sim_D": 128, "sim_ls": list(range(1, 32, 2)), "sim_n_train": 50000, "sim_n_test": 50000,
                   "hess_D": 32, "hess_l": 5, "hess_n": 50000},
        "paper": {"D": 128, "S": 4, "eps": 1.0, "sigma": 1.0,
                  "train_ls": [0, 8, 16, 20, 24, 28], "train_seeds": list(range(10)), "train_n": 1000,
                  "train_steps": 1000, "train_lr": 0.2, "train_sigma": 0.5, "init_std": 0.1,
                  "sim_D": 128, "sim_ls": [l for l in range(1, 64) if l % 16], "sim_n_train": 100000,
                  "sim_n_test": 200000, "hess_D": 128, "hess_l": 5, "hess_n": 200000},
    },
    "nads": {
        # archs: Fig. 5 and the spectra; num_networks/methods: per arch (load_nads); compare_*: secant
        # vs autograd; conv_*: N vs 2N overlaps; fig6: LeNet trained on D(u_i) (Fig. 1 settings at paper scale).
        "smoke": {"archs": ["logreg", "lenet"],
                  "num_networks": {"default": 300, "logreg": 200, "lenet": 300, "resnet18": 24},
                  "methods": {"resnet18": "autograd"}, "show": 3,
                  "compare_archs": ["lenet"], "compare_networks": 200, "compare_ks": [1, 4, 16, 64],
                  "conv_arch": "lenet", "conv_method": "autograd", "conv_sizes": [16, 32, 64],
                  "conv_ks": [1, 4, 16, 64],
                  "fig6_arch": "lenet", "fig6_indices": [0, 32, 128, 256, 1000],
                  # smoke Fig. 6: too few samples for sigma = 3, so less noise and the follow-up's recipe
                  "fig6": {"n_train": 1000, "sigma": 0.25, "eps": 1.0, "epochs": 8, "max_lr": 0.05,
                           "momentum": 0.9, "batch_size": 32, "schedule": "triangular"}},
        "medium": {"archs": ["logreg", "mlp", "lenet", "resnet18"],
                   "num_networks": {"default": 2000, "resnet18": 256},
                   "methods": {"resnet18": "autograd"}, "show": 3,
                   "compare_archs": ["lenet"], "compare_networks": 2000, "compare_ks": [1, 4, 16, 64, 256],
                   "conv_arch": "lenet", "conv_method": "secant", "conv_sizes": [125, 250, 500, 1000],
                   "conv_ks": [1, 4, 16, 64, 256],
                   "fig6_arch": "lenet", "fig6_indices": [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1023],
                   "fig6": {"n_train": 10000, "sigma": 3.0, "eps": 1.0, "epochs": 20, "max_lr": 0.5}},
        "paper": {"archs": ["logreg", "lenet", "vgg11", "resnet18", "densenet121"],
                  "num_networks": {"default": 10000}, "methods": {}, "show": 3,
                  "compare_archs": ["lenet", "resnet18"], "compare_networks": 10000,
                  "compare_ks": [1, 4, 16, 64, 256],
                  "conv_arch": "lenet", "conv_method": "secant", "conv_sizes": [625, 1250, 2500, 5000],
                  "conv_ks": [1, 4, 16, 64, 256],
                  "fig6_arch": "lenet", "fig6_indices": list(range(0, 1024, 32)) + [1023],
                  "fig6": {"n_train": 10000, "sigma": 3.0, "eps": 1.0, "epochs": 20, "max_lr": 0.5}},
    },
    "cifar10": {
        # dataset: "digits" (scikit-learn's, 32x32x3, CPU stand-in) or "cifar10"; eps: carrier
        # size in [0, 1] pixels; indices: carrier NAD indices of Fig. 7; nad_networks: NADs from
        # `ch3_nads.load_nads` (None: the committed artifact or the paper's 10,000 networks).
        "smoke": {
            "dataset": "digits", "arch": "lenet", "flip_archs": ["lenet", "logreg"], "eps": 0.05,
            "indices": [0, 1, 2, 4, 8, 32, 128, 512, 1022], "nad_networks": 256, "review_ks": [1, 2, 8, 32],
            "review_size": 8.0,
            "recipe": {"epochs": 15, "max_lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 128},
        },
        "medium": {
            "dataset": "cifar10", "arch": "lenet", "flip_archs": ["lenet", "logreg"], "eps": 0.05,
            "indices": [0, 2, 8, 32, 128, 512, 1022], "nad_networks": 1024, "review_ks": [1, 2, 8, 32],
            "review_size": 8.0,
            "recipe": {"epochs": 20, "max_lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 128},
        },
        "paper": {
            "dataset": "cifar10", "arch": "resnet18", "flip_archs": ["lenet", "vgg11", "resnet18", "densenet121"],
            "eps": 0.05, "indices": [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1022], "nad_networks": None,
            "review_ks": [1, 2, 8, 32], "review_size": 8.0,
            "recipe": {"epochs": 50, "max_lr": 0.21, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 128},
        },
    },
    "underspecification": {
        # Fig. 2: D(v_i) (+) D(v_j), sigma = 1, eps1 = 1, eps2 = 0.5 (follow-up paper, App. A.1).
        # Fig. 3: binary images (+) D(v_k), eps = 1, sigma per network (App. A.2).
        # Smoke: LeNet and the MLP on a 2 x 2 grid of NAD indices (first and 1000th), 1,000 samples,
        # and the digits; the NADs are the exact input-gradient ones (Eq. 2, "autograd") from 1,100
        # networks, which CPUs estimate in seconds; paper scale uses the published secant NADs.
        # sigma = 0.1 (paper: 1): with sigma = 1 and 500-2,000 samples no network learns D(v) on a CPU.
        "smoke": {
            "nads": {"method": "autograd", "num_networks": 1100},
            "pairs": {
                "archs": ["lenet", "mlp"], "indices": [0, 1000], "seeds": [0],
                "n_train": 1000, "n_test": 1000, "sigma": 0.1, "eps1": 1.0, "eps2": 0.5,
                "extent": 2.0, "resolution": 41, "selected": [[0, 0], [0, 1000], [1000, 0], [1000, 1000]],
                "recipe": {
                    "lenet": {"epochs": 8, "max_lr": 0.05, "momentum": 0.9, "weight_decay": 0.0,
                              "batch_size": 32, "schedule": "triangular"},
                    "mlp": {"epochs": 8, "max_lr": 0.05, "momentum": 0.9, "weight_decay": 0.0,
                            "batch_size": 32, "schedule": "triangular"},
                },
            },
            "ood": {
                "archs": ["mlp", "lenet"], "dataset": "digits", "limit": None, "indices": [0, 100, 1000],
                "seeds": [0], "eps": 1.0, "sigma": {"mlp": 3.0, "lenet": 1.0, "resnet18": 3.0},
                "recipe": {
                    "lenet": {"epochs": 8, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                              "batch_size": 128, "schedule": "triangular"},
                    "mlp": {"epochs": 10, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                            "batch_size": 128, "schedule": "triangular", "widths": [200, 50]},
                },
            },
        },
        "medium": {
            "nads": {"method": "secant", "num_networks": 2000},
            "pairs": {
                "archs": ["resnet18", "lenet", "mlp"], "indices": [0, 50, 200, 500, 1000], "seeds": [0],
                "n_train": 10000, "n_test": 10000, "sigma": 1.0, "eps1": 1.0, "eps2": 0.5,
                "extent": 2.0, "resolution": 81, "selected": [[0, 0], [0, 1000], [1000, 0], [200, 500]],
                "recipe": {
                    "resnet18": {"epochs": 15, "max_lr": 0.1, "momentum": 0.9, "weight_decay": 1e-5,
                                 "batch_size": 128, "schedule": "triangular"},
                    "lenet": {"epochs": 25, "max_lr": 0.2, "momentum": 0.9, "weight_decay": 0.0,
                              "batch_size": 128, "schedule": "triangular"},
                    "mlp": {"epochs": 25, "max_lr": 0.2, "momentum": 0.9, "weight_decay": 0.0,
                            "batch_size": 128, "schedule": "triangular"},
                },
            },
            "ood": {
                "archs": ["mlp", "lenet", "resnet18"], "dataset": "cifar10", "limit": 10000,
                "indices": [0, 10, 50, 200, 500, 1000], "seeds": [0], "eps": 1.0,
                "sigma": {"mlp": 3.0, "lenet": 1.0, "resnet18": 3.0},
                "recipe": {
                    "resnet18": {"epochs": 20, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                                 "batch_size": 128, "schedule": "triangular"},
                    "lenet": {"epochs": 20, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                              "batch_size": 128, "schedule": "triangular"},
                    "mlp": {"epochs": 30, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                            "batch_size": 128, "schedule": "triangular", "widths": [200, 50]},
                },
            },
        },
        "paper": {
            "nads": {"method": "secant", "num_networks": None},
            "pairs": {
                "archs": ["resnet18", "lenet", "mlp"], "indices": list(range(0, 1001, 100)), "seeds": [0, 1, 2],
                "n_train": 10000, "n_test": 10000, "sigma": 1.0, "eps1": 1.0, "eps2": 0.5,
                "extent": 2.0, "resolution": 101, "selected": [[0, 0], [0, 1000], [1000, 0], [200, 500], [500, 200]],
                "recipe": {
                    "resnet18": {"epochs": 30, "max_lr": 0.1, "momentum": 0.9, "weight_decay": 1e-5,
                                 "batch_size": 128, "schedule": "triangular"},
                    "lenet": {"epochs": 50, "max_lr": 0.2, "momentum": 0.9, "weight_decay": 0.0,
                              "batch_size": 128, "schedule": "triangular"},
                    "mlp": {"epochs": 50, "max_lr": 0.2, "momentum": 0.9, "weight_decay": 0.0,
                            "batch_size": 128, "schedule": "triangular"},
                },
            },
            "ood": {
                "archs": ["mlp", "lenet", "resnet18"], "dataset": "cifar10", "limit": None,
                "indices": [0, 5, 10, 25, 50, 100, 200, 400, 700, 1000], "seeds": [0, 1, 2], "eps": 1.0,
                "sigma": {"mlp": 3.0, "lenet": 1.0, "resnet18": 3.0},
                "recipe": {
                    "resnet18": {"epochs": 40, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                                 "batch_size": 128, "schedule": "triangular"},
                    "lenet": {"epochs": 40, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                              "batch_size": 128, "schedule": "triangular"},
                    "mlp": {"epochs": 60, "max_lr": 0.15, "momentum": 0.9, "weight_decay": 1e-5,
                            "batch_size": 128, "schedule": "triangular", "widths": [200, 50]},
                },
            },
        },
    },
    "antialias": {
        # Chapter 6: LeNet's pooling variants (models.lenet_pool) on a grid of Fourier directions with
        # Chapter 1's Fig. 1 recipe, their NADs (N vs 2N overlaps for conv_sizes: 3N <= num_networks
        # reuses the estimate's networks) and Fig. 6 with Chapter 3's recipe, at the same scale.
        "smoke": {"variants": ["max", "avg", "blur3", "maxblur3", "none"],
                  "grid": {"name": "coarse", "step": 8, "limit": 8},
                  "nads": {"method": "autograd", "num_networks": 250, "conv_sizes": [25, 50], "conv_ks": [1, 4, 16]},
                  "fig6_indices": [0, 1000], "show": 3},
        "medium": {"variants": ["max", "avg", "blur3", "blur5", "maxblur3", "maxblur5", "strided", "none"],
                   "grid": {"name": "coarse", "step": 4, "limit": 8},
                   "nads": {"method": "secant", "num_networks": 500, "conv_sizes": [125],
                            "conv_ks": [1, 4, 16, 64]},
                   "fig6_indices": [0, 8, 32, 128, 512, 1023], "show": 3},
        "paper": {"variants": ["max", "avg", "blur3", "blur5", "maxblur3", "maxblur5", "strided", "none"],
                  "grid": {"name": "coarse", "step": 4, "limit": 12},
                  # 1,000 secant networks per variant (~15 min for all eight on a 2-core CPU), not 10,000
                  "nads": {"method": "secant", "num_networks": 1000, "conv_sizes": [125, 250],
                           "conv_ks": [1, 4, 16, 64]},
                  "fig6_indices": [0, 8, 32, 128, 512, 1023], "show": 3},
    },
}


def check_scale(scale):
    """Raise a ValueError naming the accepted scales unless `scale` is one of them."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}; got {scale!r}")
    return scale


def preset(chapter, scale):
    """A fresh copy of the settings of `chapter` at `scale`."""
    if chapter not in PRESETS:
        raise ValueError(f"chapter must be one of {', '.join(PRESETS)}; got {chapter!r}")
    check_scale(scale)
    return copy.deepcopy(PRESETS[chapter][scale])
