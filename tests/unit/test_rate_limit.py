"""What a rate-limit refusal says (core.rate_limit): how long until the agent's bucket holds a token again."""

from write_gate.core.rate_limit import wait_seconds


def test_the_wait_is_what_the_bucket_lacks_at_its_refill_rate() -> None:
    assert wait_seconds(0.0, 60) == 1.0  # one token a second, none held
    assert wait_seconds(0.5, 60) == 0.5
    assert wait_seconds(0.0, 6) == 10.0  # a token every ten seconds
    assert wait_seconds(0.0, 120) == 0.5


def test_the_wait_is_rounded_up_to_a_tenth_and_never_zero() -> None:
    assert wait_seconds(0.75, 60) == 0.3  # 0.25 s: up, not to the nearest (0.2)
    assert wait_seconds(0.99, 60) == 0.1
    assert wait_seconds(1.0, 60) == 0.1  # a full token: never answer "wait 0"


def test_a_floats_last_digits_do_not_round_the_wait_up() -> None:
    assert wait_seconds(0.7, 60) == 0.3  # (1 - 0.7) * 10 is 3.0000000000000004 in floats
    assert wait_seconds(0.69999996, 60) == 0.3  # 3.0000004 tenths: within the six decimals kept
    assert wait_seconds(0.6999999, 60) == 0.4  # 3.000001 tenths: past them, rounded up
