"""Tests of the built HTML book: static checks of its files and a real browser (Playwright + chromium)."""
