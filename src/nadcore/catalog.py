"""What `nadcore` computes, named and priced without importing torch.

The command line checks a command's values against these before torch loads (`nadcore nads`:
seconds to import torch, a minute on a loaded machine), so a mistake costs a second. The library
reads the same names (`models.names()` is `ARCHS`, in its order; `nads.METHODS`, `nads.MAX_BATCH`;
`plan`'s costs); tests/test_cli.py holds them equal.
"""

# models.REGISTRY's keys, in its order
ARCHS = ("logreg", "mlp", "lenet", "vgg11", "vgg11_bn", "resnet18", "densenet121", "vit", "mixer", "convnext",
         "resnet18_blur")
NAD_METHODS = ("secant", "autograd", "hessian")
MAX_BATCH = 1024   # networks evaluated at once (a batch is padded with copies to this size)
# The most networks of one NAD estimate: its chunk list (~1 KB a chunk of 125 networks) stays under
# ~100 MB; the paper's estimates use 10,000.
MAX_NETWORKS = 10 ** 7
# `nadcore nads` without --yes: at most this many networks for an (architecture, method) whose cost
# is not measured (twice the paper's 10,000)
UNPRICED_NETWORKS = 20_000

# Seconds on the 2-core CPU (AVX-512) of the book's builds. Training: `train_cost` is TRAIN_S x
# samples x epochs x 2; for a run with a training and a test set of n each, callers pass samples = 2 n
# (so it costs about 4 n epochs TRAIN_S). Calibrated on whole runs of the bundle's stacked sweeps,
# 2026-11-24, nothing else running: a Fig. 1/2 cell (n = 10,000, 20 epochs) LogReg 0.78 s, LeNet
# 6.0 s; a follow-up Fig. 2 cell (n = 10,000, 50 epochs, two channels) LeNet 28 s, MLP 9 s. The deep
# networks from one float32 SGD step on a batch of 128 (benchmarks/nad_throughput.py --train, quiet):
# VGG-11 0.32 s, VGG-11-BN 0.38 s, ResNet-18 1.57 s, DenseNet-121 8.1 s; with a fifth more for
# evaluation, TRAIN_S = 0.3 x the step's time per sample. NADs: seconds per network.
TRAIN_S = {"logreg": 1e-6, "mlp": 5e-6, "lenet": 1e-5, "lenet/nopool": 1.5e-4, "resnet18": 3.7e-3,
           "vgg11": 7.5e-4, "vgg11_bn": 9e-4, "densenet121": 1.9e-2}
NAD_S = {("logreg", "secant"): 1.2e-3, ("mlp", "secant"): 1e-2, ("lenet", "secant"): 3.5e-2,
         ("lenet", "autograd"): 2.2e-2, ("resnet18", "autograd"): 0.19,
         ("vgg11", "autograd"): 0.12, ("densenet121", "autograd"): 0.18,
         # the deep networks' float32 secant on a quiet machine, from benchmarks/nad_throughput.py on
         # 2026-11-24 (bfloat16, the bundle's precision, is 1.35-1.6x faster)
         ("vgg11", "secant"): 1.7, ("resnet18", "secant"): 8.5, ("densenet121", "secant"): 52.0}
# The architectures after 2020, measured 2026-11-24 on the same 2 cores with one background job:
# training from a 1-epoch `ch3_nads.accuracy_on_nads` of one network on 2,000 + 2,000 samples (the
# transformers gain nothing from stacking: 4 ViTs took 4.1 times one); exact gradients from the
# bundle job's rate per chunk of 125 while nothing else ran (the records' durations, 621 to 1,281 s
# per 10,000 networks, include stretches shared with tests, when two jobs' threads slow each other
# far more than twofold). Their secant: `benchmarks/nad_throughput.py` on a quiet machine, 2026-11-24
# (ConvNeXt with its 4x4 patchify stem, 45 GFLOP a network).
TRAIN_S.update({"vit": 1.15e-2, "mixer": 8.7e-3, "convnext": 1.2e-2, "resnet18_blur": 1.9e-2})
# ... but Chapter 7's Fig. 6 cells (2,000 + 2,000 samples, 10 epochs, the bundle job alone) took
# 147-159 s each for the ViT, about 72 s for the Mixer and 33 s for ConvNeXt: 6, 10 and 30 times less
# than the 1-epoch estimates (ResNet-18-Blur's is still that rough one)
TRAIN_S.update({"vit": 1.9e-3, "mixer": 9e-4, "convnext": 4.1e-4})
NAD_S.update({("vit", "secant"): 7.9, ("vit", "autograd"): 3.2e-2, ("mixer", "secant"): 5.4,
              ("mixer", "autograd"): 2.2e-2, ("convnext", "secant"): 0.79, ("convnext", "autograd"): 3.9e-2,
              ("resnet18_blur", "secant"): 15.2, ("resnet18_blur", "autograd"): 5.6e-2,
              ("mlp", "autograd"): 5e-3})
# The bfloat16 secant, same benchmark and machine (LeNet: its float32 cost, an upper bound), eager and
# compiled (`nads.compiled_secant_gradient`: the bundle's secant of the deep networks).
NAD_S_BFLOAT16 = {"lenet": 3.5e-2, "vgg11": 1.2, "resnet18": 5.4, "densenet121": 35.0, "vit": 4.5, "mixer": 2.7,
                  "convnext": 0.30, "resnet18_blur": 11.2}
# (ConvNeXt and the Mixer from the bundle job's chunks: compiled, ConvNeXt is slower than eager)
NAD_S_COMPILED = {"lenet": 3.5e-2, "vgg11": 1.08, "resnet18": 3.4, "densenet121": 13.6, "vit": 2.4, "mixer": 0.86,
                  "convnext": 0.49, "resnet18_blur": 4.6}
