"""The command line and the Streamlit dashboard; sits on top of every other package."""
