"""Figures. Each function takes frames and returns a matplotlib Figure; scripts save it as PDF and PNG."""
