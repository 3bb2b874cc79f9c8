"""tb-plugin-advisor: a TensorBoard 'Advisor' tab and the tb-advisor CLI for profile diagnosis.

The package follows the data: sources/ (where runs are) → readers/ (a file into a Profile, model.py)
→ analysis/ (measure) → advice/ (rule records) → report/ (one report per run) → diff/, trend/ →
views/ (tab, CLI, exports); plugin.py wires the tab into TensorBoard. docs/ARCHITECTURE.md §1 says
what each package owns.
"""

__version__ = "0.1.0"
