"""Research Radar dashboard: `radar app` runs ``streamlit run`` on this script.

The workspace comes from ``-- --workspace DIR`` after the script (what `radar app` passes) or
$RADAR_HOME. Each page is a script next to this one; data.py holds the shared caches.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.dashboard import data

HERE = Path(__file__).resolve().parent
# (script, title, icon); the URL path is the title in lower case. Page scripts are named page_*.py:
# Streamlit puts this folder on sys.path, where a "repro.py" would shadow the repro package.
PAGES = (("page_overview.py", "Overview", ":material/insights:"), ("page_explore.py", "Explore", ":material/search:"),
         ("page_reports.py", "Reports", ":material/description:"), ("page_repro.py", "Repro", ":material/science:"),
         ("page_settings.py", "Settings", ":material/settings:"))  # fmt: skip


def main() -> None:
    st.set_page_config(page_title="Research Radar", page_icon=":material/radar:", layout="wide")
    pages = [st.Page(HERE / name, title=title, icon=icon, url_path=title.lower(), default=i == 0)
             for i, (name, title, icon) in enumerate(PAGES)]  # fmt: skip
    nav = st.navigation(pages)
    root = data.page_root()
    with st.sidebar:
        st.markdown("**Research Radar**")
        st.caption(data.md(root))
        counts = data.facets(root, data.version(root))["counts"]
        st.caption(f"{counts['documents']:,} documents · {counts['document_tags']:,} tags · "
                   f"{counts['embeddings']:,} vectors")  # fmt: skip
    nav.run()


main()
