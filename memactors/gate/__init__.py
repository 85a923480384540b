"""The write gate ("customs", DESIGN section 6): scan, decide, redact before anything is stored."""

from .scanner import Gate, GateReport, Hit

__all__ = ["Gate", "GateReport", "Hit"]
