"""teenyc._errors — what the package raises.

TeenycError is the base; each carries the C library's teeny_err code
(include/teeny/error.h) and name where one applies.  Argument problems are
also TypeError or ValueError, so code that catches those keeps working.
"""


class TeenycError(Exception):
    """A failure in libteenyc-client (code: the negative teeny_err)."""

    def __init__(self, message, code=0, name=""):
        super().__init__(message)
        self.code = code
        self.name = name


class CompileError(TeenycError):
    """The kernel or its bindings have errors; diagnostics has each
    "file:line:col: error: ..." with its source line and caret."""

    def __init__(self, message, code=0, name="", diagnostics=()):
        super().__init__(message, code, name)
        self.diagnostics = list(diagnostics)

    def __str__(self):
        head = super().__str__()
        return head + ("\n" + "".join(self.diagnostics) if self.diagnostics else "")


class ArgumentError(TeenycError, TypeError):
    """An argument does not fit the kernel's signature: count, kind, dtype,
    device or layout.  The message names the parameter."""


class CudaError(TeenycError):
    """The CUDA driver is missing or refused a load or launch."""
