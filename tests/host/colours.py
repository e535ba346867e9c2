"""Colour arithmetic of the accessibility tests: WCAG contrast of colours as rendered
(a colour with its opacity over its background), and colour-vision-deficiency simulation
(Machado, Oliveira and Fernandes 2009, severity 1) with CIE76 ΔE in Lab (D65)."""

from __future__ import annotations

import re
from itertools import combinations

RGB = tuple[float, float, float]
Matrix = tuple[RGB, RGB, RGB]

#: Machado et al. 2009, severity 1.0, on linear RGB.
PROTANOPIA: Matrix = ((0.152286, 1.052583, -0.204868), (0.114503, 0.786281, 0.099216),
                      (-0.003882, -0.048116, 1.051998))
DEUTERANOPIA: Matrix = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413),
                        (-0.011820, 0.042940, 0.968881))
IDENTITY: Matrix = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
VISIONS = {"normal": IDENTITY, "deuteranopia": DEUTERANOPIA, "protanopia": PROTANOPIA}


def parse_css(text: str) -> tuple[RGB, float]:
    """``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` (a computed style) as 0..1 channels and
    its alpha."""
    numbers = [float(n) for n in re.findall(r"[\d.]+", text)]
    alpha = numbers[3] if len(numbers) > 3 else 1.0
    return (numbers[0] / 255, numbers[1] / 255, numbers[2] / 255), alpha


def over(colour: RGB, alpha: float, background: RGB) -> RGB:
    """``colour`` at ``alpha`` painted over ``background``."""
    r, g, b = (alpha * c + (1 - alpha) * k for c, k in zip(colour, background, strict=True))
    return r, g, b


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(colour: RGB) -> float:
    r, g, b = (_linear(c) for c in colour)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    """WCAG 2 contrast ratio."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def lab(colour: RGB, vision: Matrix = IDENTITY) -> RGB:
    """CIE Lab (D65) of ``colour`` as seen with ``vision`` (a simulation matrix)."""
    lin = [_linear(c) for c in colour]
    r, g, b = (min(1.0, max(0.0, sum(m * v for m, v in zip(row, lin, strict=True))))
               for row in vision)
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return float(t ** (1 / 3)) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e(a: RGB, b: RGB) -> float:
    """CIE76 ΔE between two Lab colours."""
    return float(sum((p - q) ** 2 for p, q in zip(a, b, strict=True)) ** 0.5)


def pair_distances(colours: dict[str, RGB]) -> dict[str, dict[tuple[str, str], float]]:
    """ΔE of every pair of ``colours``, under each of :data:`VISIONS`."""
    return {name: {(a, b): delta_e(lab(colours[a], m), lab(colours[b], m))
                   for a, b in combinations(sorted(colours), 2)}
            for name, m in VISIONS.items()}
