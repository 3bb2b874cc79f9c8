"""Trend: many captures of one job in capture order, where the series shifted and why (above diff/)."""
