from nadcore import prose


def test_lists_ranges_and_names_in_words():
    assert prose.and_list([]) == "" and prose.and_list([512]) == "512"
    assert prose.and_list([512, 1022]) == "512 and 1022" and prose.and_list(["a", "b", "c"]) == "a, b and c"
    assert prose.span([50.04, 49.96]) == "50.0"                  # both ends read the same
    assert prose.span([3, 12, 7], "d") == "3–12" and prose.span([0.5, 0.25], ".2f") == "0.25–0.50"
    assert prose.name("vgg11") == "VGG-11" and prose.name("timm:test_vit") == "timm:test_vit"


def test_count_is_plural_unless_one():
    from nadcore import prose

    assert prose.count(1, "task") == "1 task" and prose.count(3, "task") == "3 tasks"
    assert prose.count(1000, "network") == "1,000 networks"


def test_duration_reads_as_a_reader_says_it():
    assert prose.duration(42) == "42 s" and prose.duration(600) == "10 min" and prose.duration(7200) == "2.0 h"
    assert prose.duration(2115.3 * 3600) == "2,115 h"
