"""Neural anisotropy directions (Sec. 3): the eigenvectors of the input-gradient covariance.

The NADs of an architecture are the eigenvectors, ordered by decreasing eigenvalue, of
`E_theta[grad_x f(x0) grad_x f(x0)^T]` over random initialisations theta (Sec. 3, Eq. 6), estimated by
Monte Carlo over `num_networks` fresh networks at one shared evaluation point `x0 ~ N(0, I)`.
Three estimators of a network's gradient:

- `"secant"` (the published one, the default): central differences with a large step h along
  every pixel basis vector, `g_i = (f(x0 + h e_i) - f(x0 - h e_i)) / (2h)`, 2D probes per network;
- `"autograd"`: the exact input gradient at x0;
- `"hessian"`: not a gradient: the expected Gram matrix `E[H^T H]` of the mixed derivative
  `H = grad^2_{theta, x} f(x0)`, whose eigenvectors are the expected right singular vectors (Eq. 5).

The package, each module's public names read from here (`nads.estimate`, `nads.NADResult`, ...):

- `estimator`: `estimate`, `load_or_estimate` (stored, else estimated and stored) and `convergence`;
- `settings`: `EstimateSettings`, an estimate's settings as one checked object, and the settings
  records (stored keys) of its chunks and result (`nad_settings`);
- `networks`: a model as a factory of fresh one-output networks, seeded by index; the point x0;
- `gradients`: one network's gradient: the secant (eager or compiled), autograd, the mixed Hessian;
- `chunks`: networks in chunks of `CHUNK`, their float64 moments merged in order (bitwise the same
  however an estimate is batched, stored, interrupted and resumed), the split halves;
- `result`: `NADResult`, `Trust` and the subspace overlaps.
"""

from nadcore.nads.chunks import (
                                 CHUNK,
                                 Halves,
                                 Ledger,
                                 chunk_arrays,
                                 chunk_moments,
                                 chunk_ranges,
                                 merge,
                                 merged_moments,
                                 moments,
)
from nadcore.nads.estimator import convergence, estimate, load_or_estimate
from nadcore.nads.gradients import (
                                 autograd_gradients,
                                 autograd_one,
                                 compiled_secant_gradient,
                                 first_linear_layer,
                                 has_compiler,
                                 mixed_gram,
                                 probes,
                                 secant_gradient,
)
from nadcore.nads.networks import (
                                 NAME,
                                 describe,
                                 eval_point_for,
                                 forward_checked,
                                 model_factory,
                                 model_source,
                                 network,
                                 network_seed,
                                 one_output_factory,
                                 resolve_eval_point,
)
from nadcore.nads.result import (
                                 TRUST_KS,
                                 NADResult,
                                 NADTrustWarning,
                                 Trust,
                                 compare,
                                 eig_decreasing,
                                 result_path,
                                 subspace_overlap,
                                 subspace_overlaps,
)
from nadcore.nads.settings import (
                                 MAX_BATCH,
                                 METHODS,
                                 EstimateSettings,
                                 default_batch,
                                 eval_point_name,
                                 nad_settings,
                                 with_eig_threads,
                                 with_pooling,
)

__all__ = ["CHUNK", "MAX_BATCH", "METHODS", "NAME", "TRUST_KS", "EstimateSettings", "Halves", "NADResult",
           "NADTrustWarning", "Trust", "autograd_gradients", "autograd_one", "chunk_arrays", "chunk_moments",
           "chunk_ranges", "compare", "compiled_secant_gradient", "convergence", "default_batch", "describe",
           "eig_decreasing", "estimate", "eval_point_for", "eval_point_name", "first_linear_layer", "forward_checked",
           "has_compiler", "load_or_estimate", "merge", "merged_moments", "mixed_gram", "model_factory",
           "model_source", "moments",
           "nad_settings", "network", "network_seed", "one_output_factory", "probes", "Ledger", "result_path",
           "resolve_eval_point", "secant_gradient", "subspace_overlap", "subspace_overlaps", "with_eig_threads",
           "with_pooling"]
