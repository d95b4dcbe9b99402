"""Weekly adoption reports: periods, content (ranking, summaries, recommendations), rendering, delivery and
the weekly job."""
