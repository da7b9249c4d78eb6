"""Source code: the file's text unchanged, plus its definitions found by a tree-sitter parse.

The canonical text is the decoded file (so `#line=a,b` and `#char=a,b` address the file
itself); `symbols` lists functions, classes, methods, types with their spans, nested
definitions qualified by their container ("Parser.parse"). The chunker cuts along them.
A language without a grammar here, or a file that does not parse, is still read: its
chunks follow lines, without symbols.
"""

from __future__ import annotations

import bisect
from pathlib import Path

from .base import Extracted, Symbol
from .text import decode, title_from_name

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
    ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".hxx": "cpp", ".sh": "bash", ".bash": "bash", ".zsh": "bash",
}  # fmt: skip

# Node types that define something, per grammar, and what to call them.
_DEFS = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": {
        "function_declaration": "function", "generator_function_declaration": "function",
        "class_declaration": "class", "method_definition": "method",
    },
    "go": {"function_declaration": "function", "method_declaration": "method",
           "type_declaration": "type"},
    "rust": {"function_item": "function", "impl_item": "impl", "struct_item": "struct",
             "enum_item": "enum", "trait_item": "trait", "mod_item": "module",
             "macro_definition": "macro"},
    "java": {"class_declaration": "class", "interface_declaration": "interface",
             "enum_declaration": "enum", "record_declaration": "record",
             "method_declaration": "method", "constructor_declaration": "constructor"},
    "c": {"function_definition": "function", "struct_specifier": "struct",
          "enum_specifier": "enum", "union_specifier": "union"},
    "bash": {"function_definition": "function"},
}  # fmt: skip
_DEFS["typescript"] = _DEFS["tsx"] = {
    **_DEFS["javascript"], "abstract_class_declaration": "class",
    "interface_declaration": "interface", "type_alias_declaration": "type",
    "enum_declaration": "enum", "function_signature": "function",
}  # fmt: skip
_DEFS["cpp"] = {**_DEFS["c"], "class_specifier": "class", "namespace_definition": "namespace"}
# Wrappers whose span belongs to the definition inside (decorators, export, template<>).
_WRAPPERS = {"decorated_definition", "export_statement", "template_declaration"}
_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
MAX_DEPTH = 4  # definitions inside definitions
MAX_LEVEL = 8  # other nodes between a definition and the next (a class body, a block)


def _language(name: str):
    from tree_sitter import Language

    if name == "python":
        import tree_sitter_python as m
    elif name == "javascript":
        import tree_sitter_javascript as m
    elif name in ("typescript", "tsx"):
        import tree_sitter_typescript as m

        return Language(m.language_tsx() if name == "tsx" else m.language_typescript())
    elif name == "go":
        import tree_sitter_go as m
    elif name == "rust":
        import tree_sitter_rust as m
    elif name == "java":
        import tree_sitter_java as m
    elif name == "c":
        import tree_sitter_c as m
    elif name == "cpp":
        import tree_sitter_cpp as m
    elif name == "bash":
        import tree_sitter_bash as m
    else:
        return None
    return Language(m.language())


def _name(node, kind_type: str) -> str | None:
    n = node.child_by_field_name("name")
    if n is None and kind_type == "impl_item":
        t, tr = node.child_by_field_name("type"), node.child_by_field_name("trait")
        if t is not None:
            return (f"{tr.text.decode('utf-8', 'replace')} for " if tr is not None else "") + (
                t.text.decode("utf-8", "replace")
            )
    if n is None and kind_type == "type_declaration":
        spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
        n = spec.child_by_field_name("name") if spec is not None else None
    if n is None and kind_type == "function_definition":  # C/C++: follow the declarators
        d = node.child_by_field_name("declarator")
        while d is not None and d.child_by_field_name("declarator") is not None:
            d = d.child_by_field_name("declarator")
        n = d
    if n is None:
        return None
    return " ".join(n.text.decode("utf-8", "replace").split())


def _arrow_name(node) -> str | None:
    """`const f = () => ...` / `let g = function () {}`: the variable's name."""
    for d in node.named_children:
        if d.type == "variable_declarator":
            v = d.child_by_field_name("value")
            n = d.child_by_field_name("name")
            if v is not None and v.type in _FUNCTION_VALUES and n is not None:
                return n.text.decode("utf-8", "replace")
    return None


class _Offsets:
    """tree-sitter counts UTF-8 bytes; the canonical text counts characters."""

    def __init__(self, text: str) -> None:
        self.ascii = text.isascii()
        if not self.ascii:
            self.starts, pos = [], 0
            for ch in text:
                self.starts.append(pos)
                pos += len(ch.encode("utf-8", "surrogatepass"))
            self.starts.append(pos)

    def char(self, byte: int) -> int:
        return byte if self.ascii else bisect.bisect_left(self.starts, byte)


def find_symbols(text: str, language: str) -> list[Symbol] | None:
    """Definitions in source order (containers before their members); None if the
    language has no grammar here."""
    lang = _language(language)
    if lang is None:
        return None
    from tree_sitter import Parser

    tree = Parser(lang).parse(text.encode("utf-8", "surrogatepass"))
    defs = _DEFS[language]
    off = _Offsets(text)
    out: list[Symbol] = []

    def walk(node, depth: int, prefix: str, level: int) -> None:
        for child in node.named_children:
            if child.type in _WRAPPERS:
                inner = [c for c in child.named_children if c.type in defs or c.type in (
                    "lexical_declaration", "variable_declaration")]
                if inner:
                    walk_one(inner[-1], depth, prefix, child.start_byte, level)
                    continue
            walk_one(child, depth, prefix, child.start_byte, level)

    def walk_one(child, depth: int, prefix: str, start: int, level: int) -> None:
        kind = defs.get(child.type)
        name = None
        if kind is not None:
            if child.type in ("struct_specifier", "enum_specifier", "union_specifier") and (
                child.child_by_field_name("body") is None
            ):
                kind = None  # a use of a type (`struct x *p`), not its definition
            else:
                name = _name(child, child.type)
        elif child.type in ("lexical_declaration", "variable_declaration"):
            name = _arrow_name(child)
            kind = "function" if name else None
        if kind is not None and name:
            full = f"{prefix}.{name}" if prefix else name
            if kind == "function" and prefix and depth > 0:
                kind = "method"
            out.append(Symbol(off.char(start), off.char(child.end_byte), full, kind, depth))
            if depth + 1 < MAX_DEPTH:
                walk(child, depth + 1, full, 0)
        elif level < MAX_LEVEL and child.named_child_count:
            walk(child, depth, prefix, level + 1)

    walk(tree.root_node, 0, "", 0)
    return out


def extract_code(path: Path) -> Extracted:
    text, warnings = decode(path.read_bytes(), path.name)
    language = LANGUAGES.get(path.suffix.lower())
    symbols = find_symbols(text, language) if language else None
    return Extracted(
        text=text, title=path.name or title_from_name(path), kind="code", warnings=warnings,
        symbols=symbols or [], language=language,
    )  # fmt: skip
