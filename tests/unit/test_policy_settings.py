"""The conflict, decay and retention settings (WRITE_GATE_CONFLICT_POLICY, WRITE_GATE_DECAY_HALF_LIFE_DAYS,
WRITE_GATE_HISTORY_RETENTION_DAYS): read from the environment, checked, and passed into the gate's Policy."""

import pytest

from write_gate.core.decisions import UnknownLabelPolicy
from write_gate.core.registry import ConflictPolicy, UndeclaredPolicy
from write_gate.serving.assembly import build_gate
from write_gate.serving.config import Settings


def test_the_defaults_are_last_writer_wins_no_decay_and_a_year(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CONFLICT_POLICY", "DECAY_HALF_LIFE_DAYS", "HISTORY_RETENTION_DAYS"):
        monkeypatch.delenv("WRITE_GATE_" + name, raising=False)
    settings = Settings()
    assert settings.conflict_policy is ConflictPolicy.LAST_WRITER_WINS
    assert settings.decay_half_life_days == {}
    assert settings.history_retention_days == 365


def test_the_environment_sets_them_and_the_gates_policy_takes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WRITE_GATE_CONFLICT_POLICY", "keep_both")
    monkeypatch.setenv("WRITE_GATE_DECAY_HALF_LIFE_DAYS", '{"llm": 30, "some-method-no-provider-knows": 0.5}')
    monkeypatch.setenv("WRITE_GATE_HISTORY_RETENTION_DAYS", "90")
    policy = build_gate(Settings(), backend=None).policy  # type: ignore[arg-type]  # building touches no engine
    assert policy.conflicts is ConflictPolicy.KEEP_BOTH
    assert policy.half_life_by_method == {"llm": 30.0, "some-method-no-provider-knows": 0.5}
    assert policy.history_retention_days == 90
    assert policy == build_gate(Settings(), backend=None).policy  # type: ignore[arg-type]  # still compares


def test_zero_retention_keeps_every_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WRITE_GATE_HISTORY_RETENTION_DAYS", "0")
    assert build_gate(Settings(), backend=None).policy.history_retention_days is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name,value",
    [
        ("CONFLICT_POLICY", "first_writer_wins"),
        ("DECAY_HALF_LIFE_DAYS", '{"llm": 0}'),
        ("DECAY_HALF_LIFE_DAYS", '{"llm": -30}'),
        ("DECAY_HALF_LIFE_DAYS", '{"llm": "soon"}'),
        ("DECAY_HALF_LIFE_DAYS", "llm=30"),
        ("HISTORY_RETENTION_DAYS", "-1"),
        ("HISTORY_RETENTION_DAYS", "inf"),
    ],
)
def test_bad_values_stop_the_start(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv("WRITE_GATE_" + name, value)
    with pytest.raises(ValueError) as caught:  # a ValidationError, or SettingsError for JSON that is not JSON
        Settings()
    assert name.lower() in str(caught.value)


def test_the_fallback_label_is_read_without_a_leading_colon(monkeypatch: pytest.MonkeyPatch) -> None:
    """`WRITE_GATE_FALLBACK_LABEL=:Project`, as the seed spells labels, names Project."""
    monkeypatch.setenv("WRITE_GATE_FALLBACK_LABEL", ":Project")
    assert Settings().fallback_label == "Project"
    monkeypatch.delenv("WRITE_GATE_FALLBACK_LABEL")
    assert Settings().fallback_label is None


def test_a_policy_is_read_in_any_letter_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a black-box audit: WRITE_GATE_UNKNOWN_LABEL_POLICY=REJECT stopped `serve` with a pydantic error."""
    monkeypatch.setenv("WRITE_GATE_UNKNOWN_LABEL_POLICY", "REJECT")
    monkeypatch.setenv("WRITE_GATE_UNDECLARED_PROPERTY_POLICY", " Remap ")
    monkeypatch.setenv("WRITE_GATE_CONFLICT_POLICY", "Higher_Confidence_Wins")
    settings = Settings()
    assert settings.unknown_label_policy is UnknownLabelPolicy.REJECT
    assert settings.undeclared_property_policy is UndeclaredPolicy.REMAP
    assert settings.conflict_policy is ConflictPolicy.HIGHER_CONFIDENCE_WINS
