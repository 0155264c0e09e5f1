"""ConvNeXt's null space (issue 42 item 5): the closed form (x0 on each 4x4 stem patch) against the
networks' gradients, the stored 10,000-network estimate, the layers behind it, and Fig. 6 along it."""

import dataclasses

import numpy as np
import pytest
import torch

from nadcore import bundle, findings, nads, presets
from nadcore.experiments import ch7_zoo

X0 = nads.eval_point_for(0, (1, 32, 32)).numpy().astype(np.float64)


def test_null_directions_are_x0_on_each_tile_normalised():
    P = ch7_zoo.null_directions(X0)
    assert P.shape == (64, 1024)
    np.testing.assert_allclose(P @ P.T, np.eye(64), atol=1e-12)
    tile = np.zeros((32, 32))
    tile[4:8, 8:12] = X0[0, 4:8, 8:12]                      # tile (1, 2): row-major index 1 * 8 + 2
    np.testing.assert_allclose(P[10], tile.ravel() / np.linalg.norm(tile))
    assert ch7_zoo.null_directions(X0, patch=8).shape == (16, 1024)
    with pytest.raises(ValueError, match="patch must divide the image size 32; got 5"):
        ch7_zoo.null_directions(X0, patch=5)
    with pytest.raises(ValueError, match="x0 must be nonzero on every tile"):
        ch7_zoo.null_directions(np.zeros((1, 32, 32)))
    with pytest.raises(ValueError, match="x0 must be a square image"):
        ch7_zoo.null_directions(np.zeros(1024))


def _with_null_space(rows, rng):
    """A `NADResult` whose spectrum is flat on D - len(rows) directions and ends in rounding (1e-15) on the
    span of the orthonormal `rows`, as a sample covariance of gradients orthogonal to them would be."""
    D, k = rows.shape[1], len(rows)
    Q = np.linalg.qr(np.hstack([rows.T, rng.standard_normal((D, D - k))]))[0]       # Q[:, :k] spans rows
    U = np.vstack([Q[:, k:].T, Q[:, :k].T])
    lam = np.concatenate([np.linspace(1.0, 0.5, D - k), np.full(k, 1e-15)])
    settings = {"arch": "test", "method": "autograd", "num_networks": 2000, "seed": 0, "input_shape": [1, 32, 32],
                "eval_point": "randn(seed=0)"}
    return nads.NADResult(lam, U, settings)


def test_null_overlap_tells_the_closed_form_from_another_null_space():
    """A spectrum that ends on x0 on each tile: rank 960, the 64 tile directions span the null space (overlap
    1). Ending on another direction on each tile instead: a null space of 64 just the same, which the closed
    form meets only by chance (about 1/16 a tile). A full spectrum: no null space, overlap 0."""
    rng = np.random.default_rng(0)
    P = ch7_zoo.null_directions(X0)
    exact = ch7_zoo.null_overlap(_with_null_space(P, rng))
    assert (exact["rank"], exact["null"], exact["tiles"]) == (960, 64, 64)
    assert exact["overlap"] > 1 - 1e-9 and exact["worst"] > 1 - 1e-9
    other = ch7_zoo.null_directions(rng.standard_normal((1, 32, 32)))
    wrong = _with_null_space(other, rng)
    reading = ch7_zoo.null_overlap(wrong)
    assert reading["null"] == 64 and 0.01 < reading["overlap"] < 0.15 and reading["worst"] < 0.01
    full = nads.NADResult(np.ones(1024), wrong.nads, wrong.settings)
    assert ch7_zoo.null_overlap(full) == {"rank": 1024, "null": 0, "tiles": 64, "overlap": 0.0, "worst": 0.0}


def test_a_convnexts_gradient_has_no_component_along_the_closed_form():
    """The Monte-Carlo side, one network through the public API: the exact gradient at x0 restricted to a
    tile is orthogonal to x0 there to float32 rounding; with a stem bias (timm initialises it at zero) it is
    not: the bias is what makes a tile's scale invisible to the stem's LayerNorm."""
    cos = ch7_zoo.null_ablation(networks=1, variants=["as built", "bias"])
    assert cos["as built"].shape == (1, 64)
    assert cos["as built"].max() < 1e-5 and cos["bias"].max() > 0.05 and np.median(cos["bias"]) > 1e-3
    with pytest.raises(ValueError, match="variants must be among as built, bias"):
        ch7_zoo.null_ablation(networks=1, variants=["head"])


def test_the_stored_estimate_null_space_is_the_closed_form():
    """ConvNeXt's 10,000-network exact-gradient NADs: rank 960, and the 64 directions past it are x0 on the
    64 stem patches (every principal angle's cosine^2 above 0.9999; 64 random directions: about 64 / 1024)."""
    stored = bundle.load_nad("convnext", "autograd")
    if stored is None:
        pytest.skip("the bundle holds no exact-gradient NADs of ConvNeXt")
    reading = ch7_zoo.null_overlap(stored)
    assert (reading["rank"], reading["null"], reading["tiles"]) == (960, 64, 64)
    assert reading["worst"] > 0.9999 and reading["overlap"] > 0.9999
    assert reading["overlap"] == pytest.approx(ch7_zoo.patch_reading(stored)["null"], abs=1e-6)


@pytest.mark.slow   # 2 ConvNeXts through 5 variants: 3 s on a quiet 2-core CPU, 20 s on a busy one
def test_null_ablation_names_the_two_layernorms_behind_the_null_space():
    """Either LayerNorm alone keeps the null space (the stem's, and stage 1's downsampling one behind stage 0's
    blocks, the identity to 1e-6 at initialisation); each leaks only through its eps (cosines up to 1e-3).
    Without both, a 4x4 tile is seen, and the null space moves to the 8x8 blocks of stage 2's downsampling."""
    cos = ch7_zoo.null_ablation(networks=2)
    assert list(cos) == list(ch7_zoo.ABLATIONS)
    assert cos["as built"].max() < 1e-5
    assert 1e-6 < cos["stem LN"].max() < 1e-3 and 1e-6 < cos["stage LN"].max() < 1e-3
    assert cos["both LN"].max() > 0.3 and cos["bias"].max() > 0.05
    blocks = ch7_zoo.null_ablation(networks=2, patch=8, variants=["both LN"])["both LN"]
    assert blocks.shape == (2, 16) and blocks.max() < 1e-2


def test_null_basis_pairs_each_null_direction_with_a_visible_control():
    tiles = ch7_zoo.null_tiles(X0)
    norms = np.linalg.norm(X0[0].reshape(8, 4, 8, 4).transpose(0, 2, 1, 3).reshape(64, 16), axis=1)
    assert tiles[0] == divmod(int(norms.argmin()), 8) and tiles[-1] == divmod(int(norms.argmax()), 8)
    B = ch7_zoo.null_basis(X0, tiles)
    P = ch7_zoo.null_directions(X0)
    np.testing.assert_allclose(B @ B.T, np.eye(6), atol=1e-12)
    for k, (r, c) in enumerate(tiles):
        u, v = B[2 * k], B[2 * k + 1]
        np.testing.assert_allclose(u, P[8 * r + c])
        assert set(np.flatnonzero(v)) <= set(np.flatnonzero(u)) and abs(v @ u) < 1e-12
    with pytest.raises(ValueError, match=r"tiles must be \(row, column\) pairs in \[0, 8\); got \(8, 0\)"):
        ch7_zoo.null_basis(X0, [(8, 0)])


@pytest.mark.slow   # trains 2 ConvNeXts for one epoch on 8 samples: about 6 s on a quiet 2-core CPU
def test_null_fig6_stores_its_cells_and_reads_them_back(tmp_path):
    stored = _with_null_space(ch7_zoo.null_directions(X0), np.random.default_rng(0))
    cfg = dataclasses.replace(presets.preset("zoo", "smoke"),
                              fig6=presets.Fig6(n_train=8, sigma=1.0, eps=1.0, epochs=1, max_lr={"default": 0.05}))
    out = ch7_zoo.null_fig6(stored, cfg, tmp_path, replicates=1, tiles=[(1, 2)])
    assert out.tiles == [(1, 2)] and out.seeds == [0]
    assert out.null.shape == out.control.shape == (1, 1)
    assert 0 <= out.null[0, 0] <= 100 and 0 <= out.control[0, 0] <= 100
    files = sorted((tmp_path / "nads" / "fig6_convnext").glob("*.npz"))
    assert len(files) == 2
    again = ch7_zoo.null_fig6(stored, cfg, tmp_path, replicates=2, tiles=[(1, 2)], compute=False)
    assert again.null[0, 0] == out.null[0, 0] and again.control[0, 0] == out.control[0, 0]
    assert np.isnan(again.null[1, 0]) and again.seeds[1] != 0          # replicate 1: not computed
    assert sorted((tmp_path / "nads" / "fig6_convnext").glob("*.npz")) == files
    with pytest.raises(ValueError, match="replicates must be an integer >= 1; got 0"):
        ch7_zoo.null_fig6(stored, cfg, tmp_path, replicates=0)


def test_gradient_cosines_measure_the_tile_restricted_gradient():
    """A hand-made 'network' (a linear map) whose gradient is known: |cos| against x0 on each tile."""
    w = torch.from_numpy(np.random.default_rng(2).standard_normal(1024)).float()

    class Linear(torch.nn.Module):
        def forward(self, x):
            return (x.reshape(len(x), -1) * w).sum(1, keepdim=True)

    cos = ch7_zoo.gradient_cosines([Linear()], X0)
    P = ch7_zoo.null_directions(X0)
    g = w.double().numpy()
    expected = [abs(g @ p) / np.linalg.norm(g[p != 0]) for p in P]
    np.testing.assert_allclose(cos[0], expected, rtol=1e-5)


def test_null_numbers_name_the_readings_for_the_prose():
    overlap = {"rank": 960, "null": 64, "tiles": 64, "overlap": 0.99999997, "worst": 0.9999999}
    ablation = {"as built": np.array([[1e-7, 3e-8]]), "stem LN": np.array([[2e-4, 3e-4]])}
    fig6 = ch7_zoo.NullFig6([(1, 2), (5, 6)], [0, 7], null=np.array([[60.0, 70.0], [64.0, np.nan]]),
                            control=np.array([[62.0, 71.0], [66.0, np.nan]]))
    n = ch7_zoo.null_numbers(overlap, ablation, fig6)
    assert n["null_rank"] == 960 and n["null_worst"] == 0.9999999
    assert n["null_cos_as_built"] == 1e-7 and n["null_cos_stem_LN"] == 3e-4
    assert n["null_fig6_null"] == pytest.approx(194 / 3) and n["null_fig6_control_cells"] == 3
    assert n["null_fig6_null_sd"] == pytest.approx(np.std([60, 70, 64], ddof=1))
    assert n["null_fig6_gap"] == pytest.approx(2.0)          # tile (1, 2): (-2 - 2) / 2; tile (5, 6): -1
    nothing = fig6._replace(null=np.full((2, 2), np.nan), control=np.full((2, 2), np.nan))
    assert not any(k.startswith("null_fig6") for k in ch7_zoo.null_numbers(overlap, None, nothing))
    # the chapter's verdict row: as well as the controls when no patch's gap exceeds NULL_GAP points
    row = ch7_zoo.null_verdict(fig6)
    assert row is not None and (row.question, row.expected) == ch7_zoo.NULL_PREDICTION
    assert row.outcome == (findings.HOLDS if n["null_fig6_gap"] <= ch7_zoo.NULL_GAP else findings.FAILS)
    assert "64.7 ± 5.0% along x₀ on a patch" in row.measured and "largest gap on a patch 2.0 points" in row.measured
    worse = ch7_zoo.null_verdict(fig6._replace(null=fig6.null - 5))
    assert worse is not None and worse.outcome == findings.FAILS
    assert ch7_zoo.null_verdict(nothing) is None and ch7_zoo.null_verdict(None) is None
