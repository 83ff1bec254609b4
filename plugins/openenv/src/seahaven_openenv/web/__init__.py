"""The HTTP routes and the app: the routes of a served world, the app factory, the card
``GET /metadata`` publishes, and ``seahaven.http`` (``web.http``), a world that mocks a REST API.
"""
