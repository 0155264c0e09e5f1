"""The readings of Chapters 4 and 5: the numbers and sentences their prose glues (`ch4_cifar10` and
`ch5_underspec`), and Chapter 4's claims table (`verdicts.stand_in_rows`), on small synthetic results."""

import math

import numpy as np
import pytest

from nadcore import published, verdicts
from nadcore.experiments import ch4_cifar10 as ch4
from nadcore.experiments import ch5_underspec as ch5

# ----------------------------------------------------------------------------- Chapter 4


def _curve(acc, follow=None):
    """A `poisoning_curve` dict from `{index: accuracy}` (-1: the clean network)."""
    index = sorted(acc)
    follow = follow or {}
    return {"index": np.array(index), "test_acc": np.array([acc[i] for i in index]),
            "follow_rate": np.array([follow.get(i, math.nan) for i in index])}


def _flip(**runs):
    return {"arch": list(runs), "original": np.array([o for o, _ in runs.values()]),
            "flipped": np.array([f for _, f in runs.values()])}


FASHION = _curve({-1: 88.0, 0: 41.4, 2: 71.5, 8: 85.4, 32: 88.0, 128: 88.3, 1022: 87.5}, {0: 26.9})


def test_and_list_and_past_rank():
    assert ch4.past_rank([0, 1, 2, 512, 1022], 255) == "512 and 1022"
    assert ch4.past_rank([0, 1, 128, 512, 1022], 100) == "128, 512 and 1022"
    assert ch4.past_rank([0, 1], 255) == ""                 # every index within the rank


def test_curve_numbers_read_a_stand_ins_fig7():
    n = ch4.curve_numbers(FASHION, [0, 2, 8, 32, 128, 1022], test_n=10_000)
    assert (n["clean"], n["first"], n["first_follow"], n["last"]) == (88.0, 41.4, 26.9, 87.5)
    assert (n["second_index"], n["second"], n["mid_index"], n["mid"]) == (2, 71.5, 8, 85.4)
    assert n["rest_min"] == 71.5                                     # past the first carrier
    assert (n["later_from"], n["later_min"], n["later_max"]) == (32, 87.5, 88.3)
    assert n["reach"] == 8 and n["ignored_from"] == 32               # 2 points under clean: below 86.0
    assert (n["ign_lo"], n["ign_hi"]) == (87.5, 88.3)
    assert n["ign_gap"] == pytest.approx(0.5) and n["ign_images"] == 50   # 0.5 % of 10,000 test images
    wide = ch4.curve_numbers(FASHION, [0, 2, 8, 32, 128, 1022], margin=0.4)   # now 1022 is hijacked too
    assert wide["reach"] == 1022 and wide["ignored_from"] == 32 and wide["ign_hi"] == 88.3


def test_curve_numbers_read_nan_where_nothing_is_computed():
    n = ch4.curve_numbers(None, [0, 2, 8, 32])
    assert (n["second_index"], n["mid_index"], n["later_from"]) == (2, 8, 32)      # the indices still given
    for key in ("clean", "first", "first_follow", "second", "mid", "last", "rest_min", "later_min", "later_max",
                "reach", "ignored_from", "ign_lo", "ign_hi", "ign_gap"):
        assert math.isnan(n[key]), key
    assert "ign_images" not in n                                       # no test set given
    short = ch4.curve_numbers(_curve({-1: 90.0, 0: 20.0, 4: 30.0}), [0, 4], test_n=100)
    assert math.isnan(short["mid"]) and math.isnan(short["mid_index"]) and math.isnan(short["later_min"])
    assert short["reach"] == 4 and math.isnan(short["ignored_from"]) and math.isnan(short["ign_images"])
    assert math.isnan(ch4.curve_numbers(_curve({-1: 90.0, 0: 20.0}), [0, 4])["last"])   # not run at NAD 4
    with pytest.raises(ValueError, match="indices must hold"):
        ch4.curve_numbers(FASHION, [])


def test_flip_numbers_give_each_network_and_the_cost():
    n = ch4.flip_numbers(_flip(lenet=(96.2, 62.7), logreg=(96.2, 96.9)), ["lenet", "logreg"])
    assert (n["lenet_before"], n["lenet_after"], n["logreg_before"], n["logreg_after"]) == (96.2, 62.7, 96.2, 96.9)
    assert n["lenet_drop"] == pytest.approx(33.5) and n["logreg_delta"] == pytest.approx(0.7)   # either way
    only = ch4.flip_numbers(_flip(lenet=(90.0, 80.0)), ["lenet", "vgg11"])
    assert math.isnan(only["vgg11_before"]) and math.isnan(only["logreg_delta"]) and only["lenet_drop"] == 10.0
    none = ch4.flip_numbers(None, ["lenet", "logreg"])
    assert set(none) == {"lenet_before", "lenet_after", "logreg_before", "logreg_after", "lenet_drop",
                         "logreg_delta"} and all(math.isnan(v) for v in none.values())


def test_paper_numbers_are_the_published_figs_7_and_8():
    p = ch4.paper_numbers()
    assert (p["clean"], p["first"], p["last"], p["last_index"]) == (89.0, 17.6, 80.3, 1020)
    assert p["min_gap"] == pytest.approx(89.0 - max(published.FIG7_RESNET18.values()))
    assert (p["b10_lo"], p["b10_hi"]) == (33.3, 68.2)                  # NADs 10-90
    band = [a for i, a in published.FIG7_RESNET18.items() if 500 <= i <= 1023]
    assert (p["b500_lo"], p["b500_hi"]) == (min(band), max(band))
    assert (p["drop_min"], p["drop_max"], p["deep_min"], p["deep_max"]) == (21.0, 36.0, 31.0, 36.0)
    assert (p["lenet_before"], p["lenet_after"], p["lenet_drop"]) == (69.0, 48.0, 21.0)
    one = ch4.paper_numbers(bands=((0, 0),))                          # the band of NAD 0 alone
    assert (one["b0_lo"], one["b0_hi"]) == (17.6, 17.6) and "b10_lo" not in one
    assert math.isnan(ch4.paper_numbers(margin=100)["min_gap"])       # no carrier 100 points under clean
    with pytest.raises(ValueError, match="bands must each hold"):
        ch4.paper_numbers(bands=((1, 9),))


def test_runs_phrase_counts_the_runs_per_carrier():
    assert ch4.runs_phrase(FASHION, 0) == "one training run (seed 0)"
    assert ch4.runs_phrase(FASHION, 3, unit="training seed") == "one training seed (seed 3)"
    twice = {"index": np.array([-1, -1, 0, 0, 5, 5])}
    assert ch4.runs_phrase(twice, 0) == "2 training runs"
    with pytest.raises(ValueError, match="curve must hold"):
        ch4.runs_phrase({"index": np.array([])}, 0)


def test_flip_reading_says_where_the_flip_points_the_papers_way():
    digits, fashion = _flip(lenet=(96.2, 62.7), logreg=(96.2, 96.9)), _flip(lenet=(88.0, 81.4), logreg=(84.4, 84.2))
    r = ch4.flip_reading({"the digits": digits, "Fashion-MNIST": fashion})
    assert r["same"] == {"the digits": True, "Fashion-MNIST": True}
    assert r["text"] == "the flip points the paper's way"
    assert r["direction"] == "The direction is the paper's on both stand-ins"
    sized = ch4.flip_reading({"the digits": digits, "Fashion-MNIST": fashion}, size=10)
    assert sized["text"] == ("the flip points the paper's way (it costs LeNet 6.6 points on Fashion-MNIST, "
                             "under the 10 the claims table asks of a CNN)")
    assert ch4.flip_reading({"the digits": digits}, size=10)["text"] == "the flip points the paper's way"
    assert ch4.flip_reading({"the digits": digits})["direction"] == "The direction is the paper's on the digits"
    control = _flip(lenet=(90.0, 85.0), logreg=(90.0, 80.0))          # the linear control moves more
    flat = _flip(lenet=(90.0, 89.0), logreg=(90.0, 90.0))              # within the 2-point margin
    r = ch4.flip_reading({"the digits": digits, "Fashion-MNIST": control})
    assert r["same"] == {"the digits": True, "Fashion-MNIST": False}
    assert r["text"] == "the flip points the paper's way on the digits, not on Fashion-MNIST"
    assert r["direction"] == "The direction is the paper's on the digits, not on Fashion-MNIST"
    r = ch4.flip_reading({"a": control, "b": flat})
    assert r["text"] == "the flip does not point the paper's way"
    assert r["direction"] == "The direction is not the paper's on either stand-in"
    with pytest.raises(ValueError, match="must hold lenet and logreg"):
        ch4.flip_reading({"the digits": _flip(lenet=(90.0, 50.0))})
    with pytest.raises(ValueError, match="flips must hold"):
        ch4.flip_reading({})


def test_chapter_4s_claims_table_has_every_stand_in_and_a_verdict():
    digits = _curve({-1: 96.2, 0: 46.2, 1: 95.6, 1022: 95.6})
    d_flip, f_flip = _flip(lenet=(96.2, 62.7), logreg=(96.2, 96.9)), _flip(lenet=(88.0, 81.4), logreg=(84.4, 84.2))
    rows = verdicts.stand_in_rows({"digits": (digits, d_flip, 15), "Fashion-MNIST": (FASHION, f_flip, 4)})
    assert [r.item for r in rows] == ["Fig. 7", "Fig. 7, Fashion-MNIST", "Fig. 8", "Fig. 8, Fashion-MNIST"]
    assert rows[0] == verdicts.fig7({"digits": (digits, 15)}) and rows[2] == verdicts.fig8({"digits": (d_flip, 15)})
    assert rows[1].scale == "LeNet on the Fashion-MNIST stand-in, 4 epochs"
    assert verdicts.fig7({"the digits": (digits, 15)}).scale == "LeNet on the digits stand-in, 15 epochs"   # one "the"
    assert rows[3].scale == "LeNet and LogReg on the Fashion-MNIST stand-in, 4 epochs"
    assert all(r.verdict == verdicts.NOT_COMPUTED for r in rows)          # CIFAR-10 is not run here
    assert rows[1].values["same"] == {"Fashion-MNIST": True}
    assert rows[1].ours.startswith("Fashion-MNIST: 41.4 % at NAD 0")
    assert rows[2].reason.endswith("digits: the flip costs LeNet 33.5 points")
    assert rows[3].reason.endswith("the flip costs LeNet 6.6 points, under 10")          # under FLIP_DROP
    # the results page's rows hold both stand-ins, each said apart
    both = verdicts.fig8({"digits": (d_flip, 15), "Fashion-MNIST": (f_flip, 4)})
    assert both.values["same"] == {"digits": True, "Fashion-MNIST": False} and "15 and 4 epochs" in both.scale
    assert both.scale == "LeNet and LogReg on the digits and Fashion-MNIST stand-ins, 15 and 4 epochs"
    table = verdicts.chapter_table(rows)
    assert list(table.columns) == ["The paper", "Ours", "Verdict"] and table.index.name == "Claim"
    assert table.iloc[1, 2].startswith("not computed here: CIFAR-10 and a GPU")
    assert table.iloc[1, 1].endswith("— LeNet on the Fashion-MNIST stand-in, 4 epochs")


# ----------------------------------------------------------------------------- Chapter 5


def _pairs(acc, train, indices=(0, 100, 1000)):
    """A `PairGrid` from per-seed accuracies (S, I, J, 3) and training accuracies (S, I, J), without sections."""
    acc = np.asarray(acc, dtype=float)
    return ch5.PairGrid(np.array(indices), np.array(indices), np.arange(len(acc)), acc, np.asarray(train, dtype=float),
                        sections=np.zeros((*acc.shape[:3], 0, 0)), coords=np.zeros(0))


def test_pair_numbers_read_a_fig2_grid():
    acc = np.full((2, 3, 3, 3), 50.0)
    acc[:, 0, 1:, 1] = [[99.0, 98.0], [97.0, 99.5]]          # v1 on the first NAD: channel 1 alone
    acc[:, 0, 1:, 2] = 49.0
    acc[:, 2, 0, 2], acc[:, 2, 0, 1] = 98.5, 50.5            # swapped
    acc[:, 0, 0, 1], acc[:, 0, 0, 2] = 99.9, 90.5           # both on the first NAD
    acc[:, 1:, 1:, 0] = [[[55.0, 57.0], [52.0, 59.0]], [[54.0, 56.0], [51.0, 53.0]]]   # neither: seed means up to 56.5
    acc[:, 1, 0, 2] = [95.0, 50.0]                           # (mid, first): one seed reads channel 2
    train = np.full((2, 3, 3), 99.0)
    train[:, 1:, 1:] = [[[60.0, 90.0], [58.0, 92.0]], [[62.0, 94.0], [56.0, 92.0]]]
    train[:, 1, 0] = [99.0, 50.0]
    n = ch5.pair_numbers(_pairs(acc, train))
    assert (n["indices"], n["seeds"], n["first"], n["mid"], n["last"]) == ([0, 100, 1000], 2, 0, 100, 1000)
    assert n["first_ch1_min"] == 98.0 and n["first_ch2_max"] == 49.0      # seed means 98.0, 98.75
    assert (n["swap_ch1"], n["swap_ch2"], n["both_ch1"], n["both_ch2"]) == (50.5, 98.5, 99.9, 90.5)
    assert n["high_both_max"] == 56.5 and (n["high_train_min"], n["high_train_max"]) == (57.0, 92.0)
    assert n["mid_fitted"] == 1 and n["mid_failed_train"] == 50.0
    assert n["sd_max"] == pytest.approx(np.std([95.0, 50.0], ddof=1))
    assert ch5.pair_numbers(_pairs(acc, train), fitted=40.0)["mid_fitted"] == 2
    assert math.isnan(ch5.pair_numbers(_pairs(acc[:1], train[:1]))["sd_max"])   # one seed: no spread
    with pytest.raises(ValueError, match="at least two NAD indices"):
        ch5.pair_numbers(_pairs(acc[:, :1, :1], train[:, :1, :1], indices=(0,)))


def _ood(rows, train=99.0, indices=(0, 5, 25, 100)):
    """An `OodGrid`, one seed, from rows (both, images only, D(v) only) per index."""
    return ch5.OodGrid(np.array(indices), np.array([0]), 1.0, np.asarray([rows], dtype=float),
                       np.full((1, len(indices)), train))


IMAGES = [93.0, 93.0, 52.0]          # a network that reads the images only
LINEAR = [99.6, 88.8, 98.9]          # ... and the linear channel


def test_ood_extremes_over_networks_and_indices():
    grids = {"lenet": _ood([IMAGES, LINEAR, [93.5, 95.0, 55.0], IMAGES]), "mlp": _ood([[92.0, 96.0, 51.0]] * 4)}
    assert ch5.ood_extremes(grids) == {"images_min": 88.8, "dv_max": 98.9}
    with pytest.raises(ValueError, match="grids must hold"):
        ch5.ood_extremes({})


def test_ood_reading_in_part_as_on_fashion_mnist():
    grids = {"lenet": _ood([[92.8, 92.8, 55.3], LINEAR, [93.7, 93.6, 53.9], [93.3, 93.2, 50.0]]),
             "mlp": _ood([[91.6, 92.8, 52.3], [92.3, 93.0, 52.8], [92.1, 92.9, 52.1], [92.0, 92.8, 52.5]], train=98.9)}
    r = ch5.ood_reading(grids, epochs=8, paper_epochs=200)
    assert r["used"] == [5] and r["used_text"] == "5" and r["iso_used"] == []
    assert (r["used_dv"], r["used_images"], r["other_dv_max"]) == (98.9, 88.8, 55.3)
    assert (r["images_min"], r["images_max"]) == (92.8, 93.6)           # at the indices LeNet ignores it
    assert (r["iso_dv_max"], r["iso_train_min"]) == (52.8, 98.9)
    assert r["text"] == (
        "LeNet takes the linear channel at *k* = 5 only (98.9 % with it alone, 88.8 % with the images alone), "
        "not even at *k* = 0 (at most 55.3 % elsewhere): the follow-up's choice in part. The MLP, which the "
        "follow-up finds reading the linear channel at every *k*, reads only the images (at most 52.8 % with the "
        "linear channel alone): it fits its training set from them (98.9 % or more) within 8 epochs, where the "
        "follow-up trains it for 200 on CIFAR-10.")
    assert r["short"] == "LeNet takes the linear channel at one index only (*k* = 5), the MLP at none"
    assert ch5.ood_reading(grids, threshold=99.0)["used"] == []           # 98.9 % no longer counts


def test_ood_reading_follows_the_choice_of_each_network():
    first = ch5.ood_reading({"lenet": _ood([LINEAR, LINEAR, IMAGES, IMAGES]), "mlp": _ood([LINEAR] * 4)})
    assert first["text"].startswith("LeNet takes the linear channel at *k* = 0 and 5 only (98.9 % with it alone, "
                                    "88.8 % with the images alone at *k* = 0; at most 52.0 % elsewhere): the "
                                    "follow-up's choice. ")
    assert "not even" not in first["text"]
    assert first["text"].endswith("reads it at every *k* here too (at least 98.9 % with it alone).")
    assert first["short"] == "LeNet takes the linear channel at 2 indices (*k* = 0 and 5), the MLP at every index"
    never = ch5.ood_reading({"lenet": _ood([IMAGES] * 4), "mlp": _ood([IMAGES, LINEAR, IMAGES, IMAGES])})
    assert never["text"].startswith("LeNet never takes the linear channel (at most 52.0 % with it alone): not the "
                                    "follow-up's choice. ")
    assert never["text"].endswith("reads it at *k* = 5 only (at most 98.9 % with it alone).")
    assert never["used_text"] == "none" and math.isnan(never["used_dv"])
    assert never["short"] == "LeNet takes the linear channel at none, the MLP at one index only (*k* = 5)"
    everywhere = ch5.ood_reading({"lenet": _ood([LINEAR] * 4), "mlp": _ood([IMAGES] * 4)})
    assert everywhere["text"].startswith("LeNet takes the linear channel at *k* = 0, 5, 25 and 100 (98.9 %")
    assert "98.9 % with it alone, 88.8 % with the images alone at *k* = 0): not the follow-up's choice." in \
        everywhere["text"] and math.isnan(everywhere["images_min"])           # nothing elsewhere
    last = ch5.ood_reading({"lenet": _ood([IMAGES, IMAGES, IMAGES, LINEAR]), "mlp": _ood([IMAGES] * 4)})
    assert "at *k* = 100 only" in last["text"] and ": not the follow-up's choice." in last["text"]


def test_ood_reading_without_runs_and_bad_input():
    r = ch5.ood_reading({})
    assert r["used"] == [] and r["used_text"] == "none" and math.isnan(r["used_dv"]) and math.isnan(r["iso_dv_max"])
    assert r["text"] == "Its runs are not stored."
    with pytest.raises(ValueError, match="grids must hold lenet and mlp; missing mlp"):
        ch5.ood_reading({"lenet": _ood([IMAGES] * 4)})


def test_chapter_4s_thresholds_are_those_of_its_rows():
    text = verdicts.stand_in_thresholds()
    assert text.startswith(verdicts.thresholds("stand_ins"))
    assert f"at most {verdicts.CHANCE_MARGIN:g} points" in text and f"cost {verdicts.HIJACK_DROP:g} points" in text
    # the last carrier's margin is the one `fig7` reads: 2.5 points under clean is not "ignored"
    curve = _curve({-1: 96.0, 0: 40.0, 1022: 96.0 - verdicts.CHANCE_MARGIN - 0.5})
    assert not verdicts.fig7({"toy": (curve, 15)}).values["same"]["toy"]
    assert verdicts.fig7({"toy": (_curve({-1: 96.0, 0: 40.0, 1022: 96.0 - verdicts.CHANCE_MARGIN}), 15)}).values[
        "same"]["toy"]
