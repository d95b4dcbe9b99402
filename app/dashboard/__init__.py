"""The Streamlit dashboard: main.py (navigation) and one script per page; data.py holds the caches.

Started by `radar app` (app/cmd_app.py), which runs ``streamlit run app/dashboard/main.py``.
"""

from pathlib import Path

MAIN_SCRIPT = Path(__file__).with_name("main.py")
