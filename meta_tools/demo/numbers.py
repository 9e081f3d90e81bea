"""Demo tools, numbers group: unit conversion, safe arithmetic, summary statistics."""

from __future__ import annotations

import ast
import difflib
import math
import operator
import re
import statistics
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

__all__ = ["calculate", "convert_units", "describe_numbers"]

# factor to the dimension's base unit, and the names a unit is known by
_UNITS: dict[str, dict[str, tuple[float, tuple[str, ...]]]] = {
    "length": {
        "m": (1.0, ("meter", "meters", "metre", "metres")),
        "km": (1000.0, ("kilometer", "kilometers", "kilometre", "kilometres")),
        "cm": (0.01, ("centimeter", "centimeters", "centimetre", "centimetres")),
        "mm": (0.001, ("millimeter", "millimeters", "millimetre", "millimetres")),
        "um": (1e-6, ("µm", "micrometer", "micrometers", "micron", "microns")),
        "nm": (1e-9, ("nanometer", "nanometers")),
        "mi": (1609.344, ("mile", "miles")),
        "yd": (0.9144, ("yard", "yards")),
        "ft": (0.3048, ("foot", "feet")),
        "in": (0.0254, ("inch", "inches")),
        "nmi": (1852.0, ("nautical mile", "nautical miles")),
    },
    "mass": {
        "kg": (1.0, ("kilogram", "kilograms", "kilo", "kilos")),
        "g": (0.001, ("gram", "grams")),
        "mg": (1e-6, ("milligram", "milligrams")),
        "t": (1000.0, ("tonne", "tonnes", "metric ton", "metric tons")),
        "lb": (0.45359237, ("lbs", "pound", "pounds")),
        "oz": (0.028349523125, ("ounce", "ounces")),
        "st": (6.35029318, ("stone", "stones")),
    },
    "volume": {
        "l": (1.0, ("liter", "liters", "litre", "litres")),
        "ml": (0.001, ("milliliter", "milliliters", "millilitre", "millilitres")),
        "m3": (1000.0, ("cubic meter", "cubic meters", "cubic metre", "cubic metres")),
        "cm3": (0.001, ("cc", "cubic centimeter", "cubic centimeters")),
        "gal": (3.785411784, ("gallon", "gallons", "us gallon", "us gallons")),
        "qt": (0.946352946, ("quart", "quarts")),
        "pt": (0.473176473, ("pint", "pints")),
        "cup": (0.2365882365, ("cups",)),
        "floz": (0.0295735295625, ("fl oz", "fluid ounce", "fluid ounces")),
        "tbsp": (0.01478676478125, ("tablespoon", "tablespoons")),
        "tsp": (0.00492892159375, ("teaspoon", "teaspoons")),
    },
    "time": {
        "s": (1.0, ("sec", "second", "seconds")),
        "ms": (0.001, ("millisecond", "milliseconds")),
        "min": (60.0, ("minute", "minutes")),
        "h": (3600.0, ("hr", "hour", "hours")),
        "d": (86400.0, ("day", "days")),
        "wk": (604800.0, ("week", "weeks")),
    },
    "speed": {
        "m/s": (1.0, ("mps", "meters per second", "metres per second")),
        "km/h": (1 / 3.6, ("kph", "kmh", "kilometers per hour", "kilometres per hour")),
        "mph": (0.44704, ("mi/h", "miles per hour")),
        "kn": (1852 / 3600, ("kt", "knot", "knots")),
        "ft/s": (0.3048, ("fps", "feet per second")),
    },
    "area": {
        "m2": (1.0, ("sq m", "square meter", "square meters", "square metre", "square metres")),
        "km2": (1e6, ("sq km", "square kilometer", "square kilometers")),
        "cm2": (1e-4, ("sq cm", "square centimeter", "square centimeters")),
        "ha": (1e4, ("hectare", "hectares")),
        "acre": (4046.8564224, ("acres", "ac")),
        "ft2": (0.09290304, ("sq ft", "square foot", "square feet")),
        "in2": (0.00064516, ("sq in", "square inch", "square inches")),
        "mi2": (2589988.110336, ("sq mi", "square mile", "square miles")),
    },
    "data": {
        "b": (1.0, ("byte", "bytes")),
        "bit": (0.125, ("bits",)),
        "kb": (1e3, ("kilobyte", "kilobytes")),
        "mb": (1e6, ("megabyte", "megabytes")),
        "gb": (1e9, ("gigabyte", "gigabytes")),
        "tb": (1e12, ("terabyte", "terabytes")),
        "kib": (1024.0, ("kibibyte", "kibibytes")),
        "mib": (1024.0**2, ("mebibyte", "mebibytes")),
        "gib": (1024.0**3, ("gibibyte", "gibibytes")),
        "tib": (1024.0**4, ("tebibyte", "tebibytes")),
    },
    "energy": {
        "j": (1.0, ("joule", "joules")),
        "kj": (1e3, ("kilojoule", "kilojoules")),
        "cal": (4.184, ("calorie", "calories")),
        "kcal": (4184.0, ("kilocalorie", "kilocalories")),
        "wh": (3600.0, ("watt hour", "watt hours")),
        "kwh": (3.6e6, ("kilowatt hour", "kilowatt hours")),
    },
    "pressure": {
        "pa": (1.0, ("pascal", "pascals")),
        "kpa": (1e3, ("kilopascal", "kilopascals")),
        "bar": (1e5, ("bars",)),
        "mbar": (100.0, ("millibar", "millibars", "hpa")),
        "atm": (101325.0, ("atmosphere", "atmospheres")),
        "psi": (6894.757293168, ("pounds per square inch",)),
        "mmhg": (133.322387415, ("torr",)),
    },
}
_TEMPERATURES: dict[str, tuple[str, ...]] = {
    "c": ("°c", "celsius", "degc", "degrees celsius"),
    "f": ("°f", "fahrenheit", "degf", "degrees fahrenheit"),
    "k": ("kelvin", "kelvins"),
}


def _unit_index() -> dict[str, tuple[str, str]]:
    index: dict[str, tuple[str, str]] = {}
    for dimension, units in _UNITS.items():
        for symbol, (_, names) in units.items():
            for name in (symbol, *names):
                index[name.lower()] = (dimension, symbol)
    for symbol, names in _TEMPERATURES.items():
        for name in (symbol, *names):
            index[name] = ("temperature", symbol)
    return index


_INDEX = _unit_index()


def _find_unit(text: str) -> tuple[str, str]:
    key = " ".join(text.strip().lower().split())
    if key in _INDEX:
        return _INDEX[key]
    close = difflib.get_close_matches(key, list(_INDEX), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ToolError(
        f"unknown unit {text!r}.{hint} Known dimensions: {', '.join([*_UNITS, 'temperature'])};"
        " use symbols like 'km', 'lb', 'gal', 'km/h', 'GiB', 'kWh', 'psi', 'C'."
    )


def _to_kelvin(value: float, unit: str) -> float:
    return {"c": value + 273.15, "f": (value - 32) * 5 / 9 + 273.15, "k": value}[unit]


def _from_kelvin(value: float, unit: str) -> float:
    return {"c": value - 273.15, "f": (value - 273.15) * 9 / 5 + 32, "k": value}[unit]


def _tidy(value: float) -> float:
    """Round away binary noise (12 significant digits) so results read like a calculator's."""
    if value == 0 or not math.isfinite(value):
        return value
    digits = 12 - math.floor(math.log10(abs(value))) - 1
    return round(value, max(digits, 0)) if digits > 0 else float(value)


def convert_units(
    value: Annotated[float, Field(description="The amount to convert.")],
    from_unit: Annotated[str, Field(description="Unit of `value`, e.g. 'mi', 'lb', 'C', 'GiB'.")],
    to_unit: Annotated[str, Field(description="Unit to convert to, of the same dimension.")],
) -> dict[str, Any]:
    """Convert an amount between units of length, mass, volume, time, speed, area, data size, energy, pressure or temperature."""
    from_dimension, source = _find_unit(from_unit)
    to_dimension, target = _find_unit(to_unit)
    if from_dimension != to_dimension:
        raise ToolError(
            f"cannot convert {from_dimension} ({from_unit!r}) to {to_dimension} ({to_unit!r});"
            " both units must measure the same thing"
        )
    if from_dimension == "temperature":
        kelvin = _to_kelvin(value, source)
        if kelvin < 0:
            raise ToolError(f"{value} {from_unit} is below absolute zero")
        result = _from_kelvin(kelvin, target)
    else:
        table = _UNITS[from_dimension]
        result = value * table[source][0] / table[target][0]
    return {
        "value": value,
        "from_unit": from_unit,
        "to_unit": to_unit,
        "dimension": from_dimension,
        "result": _tidy(result),
    }


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def _factorial(n: float) -> int:
    if n != int(n) or not 0 <= n <= 1000:
        raise ToolError("factorial() takes a whole number from 0 to 1000")
    return math.factorial(int(n))


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "degrees": math.degrees,
    "radians": math.radians,
    "floor": math.floor,
    "ceil": math.ceil,
    "hypot": math.hypot,
    "factorial": _factorial,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau}
_MAX_POWER_BITS = 10_000


def _power(base: Any, exponent: Any) -> Any:
    exact = isinstance(base, int) and isinstance(exponent, int) and exponent > 0
    if exact and exponent * max(abs(base), 2).bit_length() > _MAX_POWER_BITS:
        raise ToolError("the power is too large to compute exactly; use smaller numbers")
    return base**exponent


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.Name) and node.id in _CONSTANTS:
        return _CONSTANTS[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(a) for a in node.args))
    shown = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
    raise ToolError(
        f"{shown!r} is not allowed; use numbers, + - * / // % **, parentheses, the constants"
        f" {', '.join(_CONSTANTS)} and the functions {', '.join(_FUNCTIONS)}"
    )


#: "12% of 250", and a percentage that ends an operand ("250 * 12%"); `10 % 3` stays modulo.
_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*%(?=\s*(?:$|[*/)]))")
#: `%` before a sign: `10 % -3` (modulo) or `12% + 5` (a percentage)? Neither is guessed.
_PERCENT_SIGN = re.compile(r"%\s*[-+]")
#: A calendar date in an expression (the 1.5B wrote `24 * (2025-02-01 - 2025-01-01)`).
_DATE = re.compile(r"\b\d{4}-(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12]\d|3[01])\b")


def calculate(
    expression: Annotated[
        str,
        # No sample expression here: small models copy a sample instead of the task's numbers.
        Field(description="The arithmetic expression of the task, with + - * / ** and sqrt()."),
    ],
) -> dict[str, Any]:
    """Evaluate an arithmetic expression exactly as written (no variables, no code)."""
    text = expression.strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    if not text or len(text) > 500:
        raise ToolError("the expression must be 1 to 500 characters long")
    # Seen with the 1.5B: `12% of 250`, which Python reads as modulo and then fails on.
    # A percentage is read as one (30, and `250 * 12%` too); `10 % 3` stays modulo. Not
    # in the docstring: it is the tool's description, and small models copy samples.
    text = _PERCENT.sub(r"(\1/100)", _PERCENT_OF.sub(r"(\1/100)*", text))
    if _PERCENT_SIGN.search(text):
        raise ToolError(
            "'%' before a sign can be a percentage or a modulo: write 10 % (-3) for the"
            " remainder, or 12 / 100 + 5 for a percentage"
        )
    date = _DATE.search(text)
    if date is not None:
        # Read as arithmetic, 2025-02-01 is 2022 (or Python's octal notice, for 02).
        raise ToolError(f"{date.group()!r} is a date, not a number: this tool takes numbers only")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ToolError(f"the expression is not valid arithmetic: {exc.msg}") from None
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    except (ValueError, OverflowError, TypeError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from None
    if isinstance(value, float):
        value = int(value) if value.is_integer() and abs(value) < 2**53 else _tidy(value)
    return {"expression": expression, "result": value}


def describe_numbers(
    numbers: Annotated[
        list[float], Field(description="The values to summarise (1 to 10000 numbers).")
    ],
) -> dict[str, Any]:
    """Summarise a list of numbers: count, sum, mean, median, min, max, range and spread."""
    if not 1 <= len(numbers) <= 10_000:
        raise ToolError(f"give 1 to 10000 numbers, got {len(numbers)}")
    if not all(math.isfinite(n) for n in numbers):
        raise ToolError("every number must be finite (no NaN or infinity)")
    spread = len(numbers) > 1
    return {
        "count": len(numbers),
        "sum": _tidy(math.fsum(numbers)),
        "mean": _tidy(statistics.fmean(numbers)),
        "median": _tidy(statistics.median(numbers)),
        "min": min(numbers),
        "max": max(numbers),
        "range": _tidy(max(numbers) - min(numbers)),
        "stdev": _tidy(statistics.stdev(numbers)) if spread else None,
        "variance": _tidy(statistics.variance(numbers)) if spread else None,
    }
