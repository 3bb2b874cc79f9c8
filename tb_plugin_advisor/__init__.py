"""tb-plugin-advisor: a TensorBoard 'Advisor' tab and the tb-advisor CLI for profile diagnosis."""

__version__ = "0.1.0"
