"""The table's panel over GPIO: shuffler lines, dealer buttons, alert LED and buzzer.

* :mod:`hw.gpio.config`: the wiring (:class:`~hw.gpio.config.PanelConfig`), the signal kinds and the
  ``[gpio]`` config section; pure data, importable without gpiozero.
* :mod:`hw.gpio.panel`: :class:`~hw.gpio.panel.TablePanel`, the real backend, over gpiozero.
* :mod:`hw.gpio.fake`: the same panel on gpiozero's ``MockFactory`` pins, and helpers that press
  its buttons.
* :mod:`hw.gpio.source`: the daemon's ``gpio`` source plug-in.
"""
