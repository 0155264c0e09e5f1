"""The architectures after 2020 (issue 27): ViT, MLP-Mixer, ConvNeXt (timm's classes, `nadcore.zoo`)
and ResNet-18 with BlurPool. They build with their documented sizes, stack, and give NADs."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from conftest import estimate_kw
from torch import nn
from torch.func import stack_module_state

from nadcore import data, fourier, models, nads, stacked, train, zoo
from nadcore.experiments import ch3_nads

NEW = ("vit", "mixer", "convnext", "resnet18_blur")
TIMM = ("vit", "mixer", "convnext")
PARAMETERS = {"vit": 2_685_890, "mixer": 1_127_042, "convnext": 3_373_882, "resnet18_blur": 11_168_706}


@pytest.fixture
def one_thread():
    """One thread: on a busy 2-core machine two threads make the 1024x1024 eigendecomposition slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def seeded(name, seed=0, **kw):
    torch.manual_seed(seed)
    return models.build(name, **kw)


def test_registry_lists_them_after_the_papers_architectures():
    assert models.names()[-4:] == list(NEW)


@pytest.mark.parametrize("name", NEW)
def test_documented_parameters_and_output_shape(name):
    model = seeded(name)
    assert sum(p.numel() for p in model.parameters()) == PARAMETERS[name]
    out = model(torch.randn(3, 1, 32, 32))
    assert out.shape == (3, 2) and torch.isfinite(out).all()
    assert models.build(name, in_channels=3, num_classes=10)(torch.randn(2, 3, 32, 32)).shape == (2, 10)


def test_resnet18_blur_is_resnet18_with_blurred_strided_blocks():
    """Same parameters and initialisation as ResNet-18 (a fair comparison); 6 BlurPools: the main
    path and the shortcut of the three strided blocks; the maps still end at 512 x 4 x 4."""
    plain, blur = seeded("resnet18", 3), seeded("resnet18_blur", 3)
    a, b = plain.state_dict(), blur.state_dict()
    assert [t.shape for t in a.values()] == [t.shape for t in b.values()]
    assert all(torch.equal(x, y) for x, y in zip(a.values(), b.values()))
    pools = [m for m in blur.modules() if isinstance(m, models.BlurPool2d)]
    assert len(pools) == 6 and all((p.size, p.stride) == (models.RESNET_BLUR, 2) for p in pools)
    assert all(m.stride == (1, 1) for m in blur.modules() if isinstance(m, nn.Conv2d))
    assert blur.features[:-1](torch.zeros(1, 1, 32, 32)).shape == (1, 512, 4, 4)


@pytest.mark.parametrize("name", NEW)
def test_config_is_a_plain_record_of_the_network(name):
    cfg = models.config(name)
    assert json.loads(json.dumps(cfg)) == cfg                      # storable in settings as it is
    cfg["extra"] = 1
    assert "extra" not in models.config(name)                      # a copy
    if name in TIMM:
        assert all(v == 0 for k, v in cfg.items() if k.endswith("drop_rate") or k == "drop_path_rate")
    assert models.config("lenet") == {"class": "LeNet"}


def test_configurations_are_the_documented_ones():
    vit, mixer, convnext = (seeded(n) for n in TIMM)
    assert (vit.patch_embed.num_patches, vit.embed_dim, len(vit.blocks), vit.blocks[0].attn.num_heads,
            vit.global_pool) == (64, 192, 6, 3, "token")
    assert (mixer.stem.num_patches, mixer.embed_dim, len(mixer.blocks), mixer.global_pool) == (64, 128, 8, "avg")
    assert mixer.head.weight.abs().sum() > 0                       # not timm's zero head: NADs need a gradient
    assert [len(s.blocks) for s in convnext.stages] == [2, 2, 6, 2]
    assert [s.blocks[0].conv_dw.in_channels for s in convnext.stages] == [40, 80, 160, 320]
    assert convnext.stem[0].kernel_size == (4, 4)
    assert convnext.forward_features(torch.zeros(1, 1, 32, 32)).shape == (1, 320, 1, 1)


@pytest.mark.parametrize("name", TIMM)
def test_no_dropout_so_fit_many_stacks_them(name):
    model = seeded(name)
    assert train.vmappable(model) and stacked.chain(model) is None  # stacked through vmap
    assert not any(isinstance(m, nn.modules.dropout._DropoutNd) for m in model.modules())
    with pytest.raises(ValueError, match="p=0.5"):
        zoo.without_dropout(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5)))


@pytest.mark.parametrize("name", NEW)
def test_pooling_is_fixed(name):
    torch.testing.assert_close(seeded(name, 1, pooling="max").state_dict(), seeded(name, 1).state_dict(),
                               rtol=0, atol=0)
    for bad in (False, "none", "avg", 1):
        with pytest.raises(ValueError, match=rf"^pooling must be True or 'max' for {name} \(its pooling is fixed"):
            models.build(name, pooling=bad)
    with pytest.raises(ValueError, match="^pooling must be True or 'max'"):
        estimate_kw(name, 2, pooling=False, progress=False)


@pytest.mark.parametrize("name", NEW)
def test_a_samples_output_does_not_depend_on_the_rest_of_its_batch(name):
    """Eval mode, one batch shape: other samples changed, the sample's logits equal bitwise."""
    model = seeded(name).eval()
    g = torch.Generator().manual_seed(0)
    x, other = torch.randn(2, 5, 1, 32, 32, generator=g) * 3
    other[2] = x[2]
    with torch.no_grad():
        assert torch.equal(model(x)[2], model(other)[2])


@pytest.mark.parametrize("name", TIMM)
def test_stacked_networks_match_each_alone_and_any_position(name):
    """Two networks stacked (`stacked.forward`, vmap): each one's logits and parameter gradients
    (to float32 rounding of the largest gradient entry);
    two identical networks: equal logits and gradients bitwise, whatever the position."""
    nets = [seeded(name, s) for s in (0, 1)]
    x = torch.randn(2, 2, 1, 32, 32)
    params, _ = stack_module_state(nets)
    out = stacked.forward(nets[0])(params, x)
    out.square().sum().backward()
    for j, net in enumerate(nets):
        ref = net(x[j])
        torch.testing.assert_close(out[j], ref, rtol=1e-4, atol=1e-5)
        ref.square().sum().backward()
        for pname, p in net.named_parameters():
            scale = max(1.0, p.grad.abs().max().item())   # ConvNeXt's stem bias: sums of 3,072 terms of ~100
            torch.testing.assert_close(params[pname].grad[j], p.grad, rtol=1e-4, atol=1e-5 * scale)
    same, _ = stack_module_state([seeded(name, 2) for _ in range(2)])
    out = stacked.forward(nets[0])(same, x[:1].expand(2, -1, -1, -1, -1).contiguous())
    out.square().sum().backward()
    assert torch.equal(out[1], out[0])
    assert all(torch.equal(p.grad[1], p.grad[0]) for p in same.values())


@pytest.mark.parametrize("name", ["mixer", "resnet18_blur"])
def test_fit_many_trains_them(name):
    """mixer: the stacked trainer; resnet18_blur (BatchNorm buffers): `fit_many`'s fallback to `fit`."""
    v = torch.zeros(1, 32, 32)
    v[0, 3, 5] = 1.0
    sets = [(data.directional_dataset(v, 4, 0.5, 1.0, seed=s), data.directional_dataset(v, 2, 0.5, 1.0, seed=9))
            for s in (1, 2)]
    nets = [seeded(name, s) for s in (1, 2)]
    assert train.vmappable(nets[0]) == (name == "mixer")
    out = train.fit_many(nets, sets, train.Recipe(epochs=1, max_lr=0.01, batch_size=2), device="cpu", seeds=[1, 2],
                         chunk=2)
    assert [len(o.loss_history) for o in out] == [2, 2]
    assert all(0 <= o.test_acc <= 100 for o in out)


@pytest.mark.parametrize("name", NEW)
def test_secant_feeds_the_stem_by_linearity(name):
    """`secant_gradient` evaluates each network's first layer (its patch or stem convolution) by linearity."""
    net = nads.network(nads.one_output_factory(name)[0], 0, 0, torch.device("cpu"))
    stem = {"vit": "patch_embed.proj", "mixer": "stem.proj", "convnext": "stem.0", "resnet18_blur": "features.0"}
    assert nads.first_linear_layer(net, nads.eval_point_for(0, (1, 32, 32))) == stem[name]


@pytest.mark.parametrize("name", NEW)
def test_autograd_nads(name, one_thread):
    res = estimate_kw(name, 4, method="autograd", device="cpu", batch_size=4, progress=False)
    assert res.eigenvalues.shape == (1024,) and res.eigenvalues[0] > 0
    assert res.settings["arch"] == name


def test_secant_nads(one_thread):
    """The published estimator through a timm network (timm's own test ViT on 16x16 images: each network
    512 forward passes; Chapter 7's own networks: `test_chapter_7_secant_and_fig6`)."""
    res = estimate_kw("timm:test_vit", 2, input_shape=(1, 16, 16), method="secant", device="cpu", batch_size=2,
                        progress=False)
    assert res.eigenvalues.shape == (256,) and res.eigenvalues[0] > 0


# ----------------------------------------------------------------------------- Chapter 7 (`ch7_zoo`)

def test_effective_rank_and_top_share_of_known_spectra():
    from nadcore.experiments import ch7_zoo

    assert ch7_zoo.effective_rank(np.ones(1024)) == pytest.approx(1024)
    assert ch7_zoo.effective_rank([3.0] * 16 + [0.0] * 1008) == pytest.approx(16)
    assert ch7_zoo.effective_rank([1.0, 0, 0]) == pytest.approx(1)
    assert ch7_zoo.top_share(np.ones(1024), 16) == pytest.approx(16 / 1024)
    assert ch7_zoo.top_share([5.0, 3.0, 2.0], 1) == pytest.approx(0.5)


def test_a_pattern_tiled_with_the_period_lives_on_its_harmonics():
    from nadcore.experiments import ch7_zoo

    rng = np.random.default_rng(0)
    for period in ch7_zoo.PERIODS:
        assert ch7_zoo.harmonics(period).sum() == period ** 2
        tiled = np.tile(rng.standard_normal((3, period, period)), (1, 32 // period, 32 // period))
        np.testing.assert_allclose(ch7_zoo.energy_share(tiled, ch7_zoo.harmonics(period)), 1.0)
    assert fourier.low_band().sum() == 81     # |kx|, |ky| <= 4
    with pytest.raises(ValueError, match="period must divide the image size 32; got 5"):
        ch7_zoo.harmonics(5)


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_isotropic_shares_match_monte_carlo():
    """The closed forms of the chapter's isotropic column: a white image puts mask.mean() of its
    energy on a mask; k of D eigenvalues carry k / D of the variance (here within 3 standard errors
    of a Monte-Carlo mean over 4,000 white images)."""
    from nadcore.experiments import ch7_zoo

    x = np.random.default_rng(1).standard_normal((4000, 32, 32))
    for mask in (ch7_zoo.harmonics(4), ch7_zoo.harmonics(8), fourier.low_band()):
        share = ch7_zoo.energy_share(x, mask)
        assert abs(share.mean() - mask.mean()) < 3 * share.std() / np.sqrt(len(share))
    # the sample covariance of N white gradients (Marchenko-Pastur, gamma = D / N): its eigenvalues lie
    # below (1 + sqrt(gamma))^2, and its entropy rank is at least its participation ratio D / (1 + gamma)
    n, gamma = 20000, 1024 / 20000
    measures, lam = ch7_zoo.isotropic_reference(n, k=16, seed=2)
    assert 16 / 1024 < measures.top < 16 / 1024 * (1 + np.sqrt(gamma)) ** 2
    assert 0.99 * 1024 / (1 + gamma) < measures.effective_rank < 1024 and lam[0] >= lam[-1]


def _estimate_of(gradients, **settings):
    """A `NADResult` of the sample covariance of `gradients` (N, 1024), with the settings of a stored one."""
    G = gradients - gradients.mean(0)
    lam, vec = np.linalg.eigh(G.T @ G / (len(G) - 1))
    base = {"arch": "test", "method": "autograd", "num_networks": len(G), "seed": 0, "input_shape": [1, 32, 32],
            "eval_point": "randn(seed=0)"}
    return nads.NADResult(lam[::-1].copy(), vec[:, ::-1].T.copy(), {**base, **settings})


@pytest.mark.slow   # over 3 s on a quiet 2-core CPU (issue 39): make test, not make check
def test_patch_reading_finds_gradients_orthogonal_to_x0_on_each_patch():
    """Gradients orthogonal to x0 on each 4x4 patch (a LayerNorm after a bias-free patchify stem) have
    rank D - 64, with x0's 64 patches in the null space; scaling one patch's gradients puts the first
    NADs there. Unconstrained gradients have a full spectrum and nothing in a null space."""
    from nadcore.experiments import ch7_zoo

    x0 = nads.eval_point_for(0, (1, 32, 32)).numpy().astype(np.float64).reshape(32, 32)
    G = np.random.default_rng(0).standard_normal((3000, 8, 4, 8, 4))
    tiles = x0.reshape(8, 4, 8, 4)
    dots = (G * tiles).sum((2, 4), keepdims=True) / (tiles ** 2).sum((1, 3), keepdims=True)
    G = G - dots * tiles                                 # orthogonal to x0 on every patch
    G[:, 5, :, 2] *= 4.0                                 # the patch (5, 2) four times stronger
    reading = ch7_zoo.patch_reading(_estimate_of(G.reshape(3000, 1024)))
    assert reading["rank"] == 1024 - 64 and reading["tiles"] == 64 and reading["null"] > 0.999
    assert reading["tile0"] == (5, 2) and reading["peak0"] > 0.9
    assert reading["norm0"] == pytest.approx(np.linalg.norm(tiles[5, :, 2]) / np.median(
        np.linalg.norm(tiles.transpose(0, 2, 1, 3).reshape(64, 16), axis=1)))
    free = ch7_zoo.patch_reading(_estimate_of(np.random.default_rng(1).standard_normal((3000, 1024))))
    assert free["rank"] == 1024 and free["null"] < 1e-12 and free["peak0"] < 0.2   # 0 up to rounding
    with pytest.raises(ValueError, match="patch must divide the image size 32; got 5"):
        ch7_zoo.patch_reading(_estimate_of(G.reshape(3000, 1024)), patch=5)
    with pytest.raises(ValueError, match="eval_point must be the seed's randn"):
        ch7_zoo.eval_point(_estimate_of(G.reshape(3000, 1024), eval_point="given"))


def test_convnext_gradient_is_orthogonal_to_x0_on_each_stem_patch():
    """Why ConvNeXt's exact-gradient NADs have rank 960 = 1,024 - 64: at initialisation its output does
    not change when one 4x4 patch of the input is scaled (a bias-free stem, then a LayerNorm), so its
    input gradient is orthogonal to x0 on each patch. The Mixer's patch embedding feeds its residual
    stream unnormalised: random cosines."""
    x0 = nads.eval_point_for(0, (1, 32, 32))
    cosines = {}
    for name in ("convnext", "mixer"):
        net = nads.network(nads.one_output_factory(name)[0], 0, 0, torch.device("cpu"))
        x = x0[None].clone().requires_grad_()
        net(x).sum().backward()
        g = x.grad[0, 0].double().numpy().reshape(8, 4, 8, 4)
        t = x0[0].double().numpy().reshape(8, 4, 8, 4)
        cosines[name] = np.abs((g * t).sum((1, 3))) / np.sqrt((g ** 2).sum((1, 3)) * (t ** 2).sum((1, 3)))
    assert cosines["convnext"].max() < 1e-5 and cosines["mixer"].max() > 0.2


@pytest.fixture
def zoo_tiny(monkeypatch):
    from nadcore import presets

    table = {k: dict(v) for k, v in presets.PRESETS.items()}
    table["zoo"]["smoke"] = replace(table["zoo"]["smoke"], archs=["vit"], references=["lenet"], num_networks=30,
                                    conv_sizes=[10], conv_ks=[1, 4], top=4, show=2)
    monkeypatch.setattr(presets, "PRESETS", table)


@pytest.mark.slow
def test_chapter_7_computes_stores_and_reads_back(zoo_tiny, tmp_path):
    from nadcore.experiments import ch7_zoo
    from nadcore.plots import nads as nad_figs
    from nadcore.plots import zoo as figs

    out = ch7_zoo.chapter_results("smoke", 0, tmp_path, "cpu", progress=False)
    assert out.archs == ["vit"] and out.references == ["lenet"] and not ch7_zoo.missing(out)
    assert out.nads["vit"].settings == nads.nad_settings("vit", 30, "autograd")
    assert out.convergence["vit"]["overlap"].shape == (1, 2) and out.secant == {}
    assert out.isotropy["vit"] == ch7_zoo.isotropy(out.nads["vit"], 4)
    files = sorted(tmp_path.rglob("*.npz"))
    again = ch7_zoo.chapter_results("smoke", 0, tmp_path, "cpu", compute=False)
    assert sorted(tmp_path.rglob("*.npz")) == files                                    # read-only: nothing new
    np.testing.assert_array_equal(again.nads["vit"].nads, out.nads["vit"].nads)
    numbers = ch7_zoo.key_numbers(again)
    assert numbers["vit_top"] == out.isotropy["vit"].top
    assert numbers["vit_conv4"] == out.convergence["vit"]["overlap"][-1][1]
    assert numbers["isotropic_top"] == out.isotropic.top
    assert list(ch7_zoo.verdict(again)) == ["vit"]                 # the other predictions read networks not run
    lam = again.nads["vit"].eigenvalues                      # top = 4: lambda_3 and lambda_4 over lambda_0
    assert numbers["vit_lam3"] == lam[3] / lam[0] and numbers["vit_lam4"] == lam[4] / lam[0]
    assert numbers["networks"] == numbers["vit_networks"] == 30 and "secant_networks" not in numbers
    assert ch7_zoo.chapter_results("smoke", 0, tmp_path / "empty", "cpu", compute=False).nads == {"lenet": None,
                                                                                                      "vit": None}
    # the chapter's figures and table from the same results (conftest checks every figure is readable)
    fig = figs.energy_maps(again)
    assert [ax.get_title() for ax in fig.axes[:2]] == ["LeNet", "ViT"]
    assert [t for t in fig.axes[1].get_xticks()] == [-16, -8, 0, 8]      # lines cross at the 4-pixel harmonics
    lines = figs.spectra(again).axes[0].get_lines()
    assert [line.get_label() for line in lines if not line.get_label().startswith("_")] == ["LeNet", "ViT",
                                                                                           "isotropic gradients"]
    table = figs.isotropy_table(again)
    assert list(table.index) == ["LeNet", "ViT", "isotropic gradients"]
    assert table.index.name == "network (exact gradient, N = 30)"
    assert table.loc["ViT", "variance in first 4 (%)"] == round(100 * numbers["vit_top"], 1)
    assert table.loc["ViT", "N vs 2N, k=4"] == f"{numbers['vit_conv4']:.2f}"
    assert len(nad_figs.fig5(figs.gallery_rows(again), show=2).axes) == 10      # 2 rows x 2 x 2 + colour bars


def test_chapter_7_paper_files_are_the_bundles():
    """The published scale's NADs and convergence are the results bundle's files (one computation)."""
    from nadcore import bundle, presets
    from nadcore.experiments import ch7_zoo

    cfg = presets.preset("zoo", "paper")
    assert tuple(cfg.archs) == bundle.ZOO_ARCHS
    for arch in cfg.archs:
        assert ch7_zoo.convergence_settings(arch, cfg, bundle.SEED) == bundle.convergence_item(arch)
        for method in ("autograd", "secant"):
            assert ch7_zoo.nad_settings(arch, cfg, bundle.SEED, method) == bundle.nad_item(arch, method)
    for arch in cfg.references:
        assert ch7_zoo.nad_settings(arch, cfg, bundle.SEED) == bundle.nad_item(arch, "autograd")


@pytest.mark.slow
@pytest.mark.skipif(not nads.has_compiler(), reason="the compiled secant needs a C++ compiler (apt-get install g++)")
def test_chapter_7_secant_and_fig6(monkeypatch, tmp_path):
    """The secant of the new networks and of Fig. 6's reference, Fig. 6 on them with the reference's own
    learning rate, stored and read back; the secant table sets each secant under its exact gradient."""
    from nadcore import presets
    from nadcore.experiments import ch7_zoo
    from nadcore.plots import zoo as figs

    table = {k: dict(v) for k, v in presets.PRESETS.items()}
    f6 = presets.Fig6(n_train=64, sigma=1.0, eps=1.0, epochs=1, max_lr={"lenet": 0.5, "default": 0.05})
    table["zoo"]["smoke"] = replace(table["zoo"]["smoke"], archs=["convnext"], references=["lenet"], num_networks=8,
                                    conv_sizes=[2], conv_ks=[1, 4], top=4, secant_networks=2,
                                    fig6_archs=["lenet", "convnext"], fig6_indices=[0, 5], fig6=f6)
    monkeypatch.setattr(presets, "PRESETS", table)
    cfg = presets.preset("zoo", "smoke")
    assert ch7_zoo.secant_archs(cfg) == ["lenet", "convnext"]
    assert ch7_zoo.fig6_recipe("lenet", cfg, 0)["max_lr"] == 0.5 and ch7_zoo.fig6_recipe("convnext", cfg, 0) == {
        "n_train": 64, "sigma": 1.0, "eps": 1.0, "epochs": 1, "max_lr": 0.05, "seed": 0}
    out = ch7_zoo.chapter_results("smoke", 0, tmp_path, "cpu", progress=False)
    assert out.secant["lenet"].settings == nads.nad_settings("lenet", 2, "secant", precision="bfloat16",
                                                                compiled=True)
    assert list(out.fig6) == ["lenet", "convnext"] and all(sorted(f) == [0, 5] for f in out.fig6.values())
    again = ch7_zoo.chapter_results("smoke", 0, tmp_path, "cpu", compute=False)
    assert again.fig6 == out.fig6
    assert ch7_zoo.key_numbers(again)["convnext_fig6_5"] == out.fig6["convnext"][5]
    recipe = {k: v for k, v in ch7_zoo.fig6_recipe("convnext", cfg, 0).items() if k != "seed"}
    fresh = ch3_nads.accuracy_on_nads("convnext", out.secant["convnext"], [5], seed=0, device="cpu",
                                      progress=False, **recipe)
    assert fresh[0] == out.fig6["convnext"][5]
    assert ch7_zoo.chapter_results("smoke", 0, tmp_path / "empty", "cpu", compute=False).fig6 == {"lenet": {},
                                                                                                      "convnext": {}}
    rows = figs.secant_table(again)
    assert list(rows.index) == ["ConvNeXt, exact gradient (8)", "ConvNeXt, secant (2, bfloat16)",
                                "isotropic gradients (2)"]
    assert set(ch7_zoo.secant_isotropy(again)) == {"convnext", "isotropic"}   # LeNet is Fig. 6's reference only
    fig = figs.fig6(again)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["LeNet", "ConvNeXt", "chance"]


# ----------------------------------------------------------------------------- the stored numbers and timm

def test_every_stored_record_of_a_timm_network_names_timms_version():
    """timm's initialisation decides these numbers: each record says which timm made them."""
    from pathlib import Path

    from nadcore import store

    root = Path(__file__).resolve().parents[1] / "bundle"
    records = [store.load(p).record for p in sorted(root.rglob("*.npz"))]
    timm_made = [r for r in records if "timm" in store.library_versions(r["settings"])]
    if not timm_made:
        pytest.skip("the bundle holds no result of a timm network yet")
    assert all(r["versions"]["timm"] == "1.0.31" and r["versions"]["torch"] == r["torch_version"] for r in timm_made)
    assert all("timm" not in r.get("versions", {}) for r in records if r not in timm_made)


@pytest.mark.slow
def test_a_stored_chunk_of_the_smallest_zoo_networks_exact_gradients_recomputes():
    """The exact gradients of the first chunk (125 networks) of the MLP-Mixer's stored estimate (the
    smallest of timm's networks here), recomputed with this checkout's timm: bit for bit the chunk's
    digest on the estimate's CPU with its threads; on another CPU (the digest cannot match), the
    chunk's total variance within 5 % of its share of the estimate's (measured on an AVX2 EPYC: 0.2 %)
    and its variance along the stored 16 leading NADs within 15 % of theirs (measured: 8 %). About
    10 s on the estimate's CPU; minutes on a busy 2-core one."""
    from nadcore import bundle, store

    result = bundle.load_nad("mixer", "autograd")
    if result is None:
        pytest.skip("the bundle holds no exact-gradient NADs of the MLP-Mixer yet")
    assert min(TIMM, key=lambda a: PARAMETERS[a]) == "mixer"
    assert result.record["versions"]["timm"] == __import__("timm").__version__   # else another initialisation
    s = result.settings
    (a, b), digest = result.chunks["ranges"][0], result.chunks["digests"][0]
    x0 = nads.eval_point_for(s["seed"], tuple(s["input_shape"]))
    threads = torch.get_num_threads()
    torch.set_num_threads(int(result.record["threads"]))
    try:   # batch 32: the estimate's batch of exact gradients on a CPU
        chunk = nads.chunk_moments(lambda: models.build("mixer", num_classes=1),
                                   nads.EstimateSettings("autograd", seed=s["seed"], batch_size=32), x0, int(a), int(b))
    finally:
        torch.set_num_threads(threads)
    assert chunk["count"] == b - a == nads.CHUNK
    if result.record["machine"] == store.machine():
        assert store.fingerprint(chunk["mean"], chunk["m2"]) == digest
        return
    cov, lam, top = chunk["m2"] / (b - a - 1), result.eigenvalues, result.nads[:16].astype(np.float64)
    assert np.trace(cov) / lam.sum() == pytest.approx(1.0, rel=0.05)
    share = np.trace(top @ cov @ top.T) / np.trace(cov)
    assert share == pytest.approx(lam[:16].sum() / lam.sum(), rel=0.15)


def test_anisotropy_table_puts_both_estimates_side_by_side():
    """Issue 57: one measure (the effective rank) for every stored estimate, secant and exact gradient apart."""
    from nadcore.experiments import ch7_zoo as zoo
    from nadcore.nads import NADResult

    def result(eigenvalues, n):
        return NADResult(np.asarray(eigenvalues, dtype=np.float64), np.eye(4, dtype=np.float32),
                         {"num_networks": n, "input_shape": [4]})

    table = zoo.anisotropy_table({("a", "secant"): result([1.0, 1.0, 0.0, 0.0], 10),
                                  ("a", "autograd"): result([1.0, 1.0, 1.0, 1.0], 20),
                                  ("b", "autograd"): result([1.0, 0.0, 0.0, 0.0], 30)})
    assert list(table) == ["a", "b"] and table["a"]["secant"] == (pytest.approx(2.0), 10)
    assert table["a"]["autograd"] == (pytest.approx(4.0), 20) and table["b"] == {"autograd": (pytest.approx(1.0), 30)}
