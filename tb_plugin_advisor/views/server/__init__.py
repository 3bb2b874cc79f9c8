"""The HTTP side of the Advisor tab: routes, the analysis workers and their progress, JSON errors."""
