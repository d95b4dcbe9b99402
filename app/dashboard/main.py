"""Research Radar dashboard: `radar app` runs ``streamlit run`` on this script.

The workspace comes from ``-- --workspace DIR`` after the script (what `radar app` passes) or
$RADAR_HOME. Each page is a script next to this one; data.py holds the shared caches.
"""

from __future__ import annotations

import importlib
import threading
from pathlib import Path

import streamlit as st
from PIL import Image, ImageDraw

from radar.app.dashboard import data

HERE = Path(__file__).resolve().parent
# (script, title, icon); the URL path is the title in lower case. Page scripts are named page_*.py:
# Streamlit puts this folder on sys.path, where a "repro.py" would shadow the repro package.
PAGES = (
    ("page_overview.py", "Overview", ":material/insights:"),
    ("page_methods.py", "Methods", ":material/lightbulb:"),
    ("page_explore.py", "Explore", ":material/search:"),
    ("page_reports.py", "Reports", ":material/description:"),
    ("page_repro.py", "Repro", ":material/science:"),
    ("page_people.py", "People", ":material/group:"),
    ("page_settings.py", "Settings", ":material/settings:"),
)


@st.cache_resource
def _icon() -> Image.Image:
    img = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    for r, width in ((14, 2), (9, 2)):
        draw.ellipse((16 - r, 16 - r, 16 + r, 16 + r), outline=(255, 75, 75, 255), width=width)
    draw.ellipse((13, 13, 19, 19), fill=(255, 75, 75, 255))
    return img


@st.cache_resource
def _preload() -> threading.Thread:
    """Import the training stack (torch, transformers, TRL: ~10 s) in the background once per server,
    so the first visit to the Repro page does not wait for it."""
    thread = threading.Thread(
        target=importlib.import_module, args=("radar.repro.trainer",), name="preload", daemon=True
    )
    thread.start()
    return thread


def main() -> None:
    # the icon is drawn here: a Material or emoji icon would be fetched from a CDN (offline by default)
    st.set_page_config(page_title="Research Radar", page_icon=_icon(), layout="wide")
    pages = [
        st.Page(HERE / name, title=title, icon=icon, url_path=title.lower(), default=i == 0)
        for i, (name, title, icon) in enumerate(PAGES)
    ]
    nav = st.navigation(pages)
    root = data.page_root()
    with st.sidebar:
        st.markdown("**Research Radar**")
        st.caption(data.md(root))
        counts = data.facets(root, data.version(root)).counts
        st.caption(
            f"{counts['documents']:,} documents · {counts['document_tags']:,} tags · {counts['embeddings']:,} vectors"
        )
    nav.run()
    _preload()  # after the page: its imports are done, so the two threads never import in a cycle


main()
