"""A saved figure is one page that needs no network and runs only its own inline script."""

import base64
import hashlib
import re

import pytest

import headmap
from headmap import _widget
from figure_parts import Parts, unpack
from synthetic import softmax_attention, words

POLICY = re.compile(
    r"default-src 'none'; script-src ((?:'sha256-[A-Za-z0-9+/]+=*' )+)'wasm-unsafe-eval'; "
    r"worker-src blob:; img-src blob: data:; style-src 'self'"
)


def saved_pages(tmp_path):
    """The three ways to save, each a page."""
    w = softmax_attention(2, 2, 6)
    fig = headmap.show(w, words(6), view="lines", head=1, html_action="return")
    yield "figure.save", fig.save(tmp_path / "a.html")
    yield "headmap.save(figure)", headmap.save(fig, tmp_path / "b.html")
    yield "headmap.save(attention, tokens)", headmap.save(w, words(6), str(tmp_path / "c.html"), view="lines", head=1)


def csp(parts):
    metas = [a for tag, a in parts.tags if tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy"]
    assert len(metas) == 1, "one CSP meta"
    return metas[0]["content"]


def test_each_way_of_saving_writes_the_same_strict_self_contained_page(tmp_path):
    pages = {how: path.read_text(encoding="utf-8") for how, path in saved_pages(tmp_path)}
    assert len(set(pages.values())) == 1, "one figure, one page, whichever way it was saved"
    for how, page in pages.items():
        parts = Parts(page)
        policy = csp(parts)
        assert POLICY.fullmatch(policy), f"{how}: {policy}"
        allowed = set(re.findall(r"'sha256-[^']+'", policy))
        executable = [s for s in parts.scripts if s["attrs"].get("type") in (None, "", "text/javascript", "module")]
        assert len(executable) == 1, f"{how}: the widget's one script, nothing else runs"
        for script in executable:
            digest = base64.b64encode(hashlib.sha256(script["text"].encode("utf-8")).digest()).decode()
            assert f"'sha256-{digest}'" in allowed, f"{how}: an inline script without its hash"
        assert page.index("Content-Security-Policy") < page.index("<script"), f"{how}: the policy comes before any script"
        for tag, attrs in parts.tags:
            assert "style" not in attrs, f"{how}: a style attribute on <{tag}>"
            for name in ("src", "href", "action", "data"):
                assert not re.match(r"\s*(https?:)?//", attrs.get(name) or ""), f"{how}: <{tag} {name}> points at the network"
        assert not any(tag in ("style", "iframe", "img", "object", "embed") for tag, _ in parts.tags), how
        assert [a for tag, a in parts.tags if tag == "link"] == [{"rel": "icon", "href": "data:,"}], f"{how}: links"
        assert not re.search(r"https?://", page.replace(parts.scripts[-1]["text"], "")), f"{how}: a URL outside the widget's script"
        assert parts.element()["view"] == "lines" and parts.element()["head"] == "1"


def test_the_page_holds_the_widget_script_verbatim_and_the_data(tmp_path, widget_placeholder):
    page = headmap.show(softmax_attention(1, 1, 3), words(3), html_action="return").page()
    parts = Parts(page)
    assert parts.scripts[-1]["text"] == widget_placeholder.read_text(encoding="utf-8")
    tensors, _, _ = unpack(page, tmp_path)
    assert tensors["rows.0.encoder_self"].shape == (1, 1, 3, 3)


def test_line_ends_are_normalized_so_the_hash_is_the_browsers(widget_placeholder):
    widget_placeholder.write_bytes(b"let a = 1;\r\nlet b = 2;\r")
    page = headmap.show(softmax_attention(1, 1, 3), words(3), html_action="return").page()
    text = "let a = 1;\nlet b = 2;\n"
    assert "\r" not in page
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp(Parts(page))


def test_a_widget_script_that_would_end_its_script_element_is_refused(widget_placeholder):
    widget_placeholder.write_text("const s = '</SCRIPT>';", encoding="utf-8")
    with pytest.raises(ValueError, match="contains '</script'"):
        headmap.show(softmax_attention(1, 1, 3), words(3), html_action="return").data


def test_without_the_widget_script_the_error_says_where_it_was_looked_for(monkeypatch, tmp_path):
    monkeypatch.delenv("HEADMAP_INLINE_JS")
    monkeypatch.setattr(_widget, "PACKAGED", tmp_path / "static" / "headmap-inline.js")
    monkeypatch.setattr(_widget, "CHECKOUT", tmp_path / "dist" / "headmap-inline.js")
    with pytest.raises(FileNotFoundError, match="scripts/build/wheel.*scripts/build/all.*HEADMAP_INLINE_JS"):
        headmap.show(softmax_attention(1, 1, 3), words(3), html_action="return").data


def test_save_needs_a_path_and_a_figure_takes_no_more_arguments(tmp_path):
    fig = headmap.show(softmax_attention(1, 1, 3), words(3), html_action="return")
    with pytest.raises(TypeError, match="needs a path"):
        headmap.save(fig)
    with pytest.raises(TypeError, match="takes no other arguments"):
        headmap.save(fig, tmp_path / "x.html", view="grid")
    assert headmap.save(fig, path=tmp_path / "y.html").is_file()


def test_a_safetensors_path_saves_the_weights_alone_for_the_widget_and_explorer(tmp_path):
    from safetensors.numpy import load_file
    import json
    w = softmax_attention(2, 3, 5)
    fig = headmap.show(w, words(5), view="grid", head="all", html_action="return")
    path = fig.save(tmp_path / "run.safetensors")
    tensors = load_file(path)
    assert tensors["rows.0.encoder_self"].shape == (2, 3, 5, 5)
    assert abs(tensors["rows.0.encoder_self"].astype("float32") - w).max() <= 5e-4
    with open(path, "rb") as f:
        header = json.loads(f.read(8 + int.from_bytes(open(path, "rb").read(8), "little"))[8:])
    assert json.loads(header["__metadata__"]["headmap"])["format"] == "headmap.attention"
