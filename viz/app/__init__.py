"""The Qt application (front ends, above export and render): its window, panels, dialogs and settings.
Everything that imports Qt for the app lives in this folder; only viz.cli imports it.

The widgets subscribe to one ``Session`` (``viz.app.state``), which holds the current
scenario, its analysis and the position in the animation, and push the user's actions
back to it as plain calls. The model in ``viz/`` never imports Qt.
"""
