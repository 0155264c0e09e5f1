"""The one seed derivation (`nadcore.seeds`) and the code's use of it."""

import ast
from pathlib import Path

from nadcore import seeds
from nadcore.experiments import ch1_fourier

SRC = Path(__file__).resolve().parents[1] / "src" / "nadcore"


def test_streams_are_derive_by_role():
    st = seeds.streams(7, 3, 5)
    assert st == tuple(seeds.derive(7, 3, 5, role) for role in (seeds.TRAIN, seeds.TEST, seeds.INIT, seeds.SHUFFLE))
    assert len(set(st)) == 4
    assert all(0 <= s < 2 ** 31 for s in st)


def test_derive_depends_on_every_part_and_its_order():
    base = seeds.derive(0, 1, 2)
    assert base == seeds.derive(0, 1, 2)                       # a pure function
    assert len({base, seeds.derive(1, 1, 2), seeds.derive(0, 2, 1), seeds.derive(0, 1, 3), seeds.derive(0, 1)}) == 5
    assert seeds.derive(0, 1, 2, bits=32) % 2 ** 31 == base


def test_fourier_cells_draw_distinct_streams():
    """Every stream of every cell of a 32 x 32 grid differs (an offset scheme such as `2 * cell + k`
    lets the test set of one cell be the training set of another run's cell)."""
    size = 32
    all_seeds = [s for kx in range(size) for ky in range(size) for s in ch1_fourier.cell_streams(0, kx, ky, size)]
    assert len(set(all_seeds)) == len(all_seeds) == 4 * size * size
    assert ch1_fourier.cell_streams(0, -3, 5, size) == ch1_fourier.cell_streams(0, size - 3, 5, size)
    assert not set(ch1_fourier.cell_streams(1, 0, 1, size)) & set(all_seeds)   # run 1 shares nothing with run 0


def is_seed(node):
    """A name, attribute or item that holds a seed (`seed`, `cs.seed`, `c["seed"]`), or `int()` of one."""
    if isinstance(node, ast.Call) and ast.unparse(node.func) == "int" and node.args:
        return is_seed(node.args[0])
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and "seed" in ast.unparse(node)


def seed_arithmetic(source):
    """`seed + 1`, `2 * cell_seed + k`, `int(seed) + r`...: arithmetic on a seed."""
    return [ast.unparse(node) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult))
            and (is_seed(node.left) or is_seed(node.right))]


def test_seed_arithmetic_is_found():
    assert seed_arithmetic("a = f(seed=2 * seed + i)\nb = [int(seed) + s for s in x]\nc = derive(c['seed'], 1) + 2")
    assert not seed_arithmetic("a = derive(seed, i)\nb = [seed] * len(models)\nc = len(P['seeds']) * 3")


def test_no_seed_arithmetic_in_the_library():
    """The library derives seeds only through `seeds.derive`: no offsets such as `seed + k`."""
    found = {str(p.relative_to(SRC)): hits for p in sorted(SRC.rglob("*.py"))
             if (hits := seed_arithmetic(p.read_text()))}
    assert not found


def test_replicates_start_with_the_run_itself():
    assert seeds.replicate(5, 0) == 5                          # replicate 0 is the run stored before replicates
    more = [seeds.replicate(5, r) for r in (1, 2, 3)]
    assert len(set(more)) == 3 and 5 not in more
    assert more[0] == seeds.derive(5, seeds.REPLICATE, 1) and more[0] != seeds.replicate(6, 1)


def test_bad_replicate_is_named():
    import pytest

    for bad in (-1, 1.0, True):
        with pytest.raises(ValueError, match="r .the replicate. must be an integer >= 0"):
            seeds.replicate(0, bad)
