"""Analyses over the IR: shapes, dynamic-variable solving, cost, contractions."""
