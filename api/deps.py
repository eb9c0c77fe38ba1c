"""What a request works with: the app's database, settings and service context, and who is asking."""

from __future__ import annotations

from flask import current_app

from api.auth import current_principal
from core.config import Settings
from services.context import Caller, Context
from store.db import Database


def database() -> Database:
    return current_app.extensions["zolve.db"]


def settings() -> Settings:
    return current_app.extensions["zolve.settings"]


def context() -> Context:
    return current_app.extensions["zolve.context"]


def caller() -> Caller:
    return current_principal()
