"""What humans see: gate views and screens, live progress, the HTML run report. Nothing here reaches an agent.

Imports ``core``, ``store`` and the leaves; never ``cli``, ``adapters`` or the facade.
"""
