"""Cameras over the table, for the camera fallback.

* :mod:`hw.camera.opencv`: :class:`~hw.camera.opencv.OpenCVCamera`, the real backend, and the
  :class:`~hw.camera.opencv.FrameSource` interface every camera offers.
* :mod:`hw.camera.fake`: :class:`~hw.camera.fake.FakeCamera`, frames from a callable.
* :mod:`hw.camera.config`: the ``[camera]`` config section.
"""
