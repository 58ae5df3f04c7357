"""Files: what lies below a collection folder, reached safely.

Confinement by directory descriptors (`fsafe`), the one walker and its rules (`walker`),
ignore files (`ignore`, `globmatch`), finding collections (`discovery`), the folders a
model may touch (`confine`), and what the OS says changed (`feed`, `inotify`). Nothing here
knows of SQLite, models or ranking.
"""
