"""What a request works with: the app's database, settings and service context, and who is asking."""

from __future__ import annotations

from api.auth import current_principal
from api.extension import zolve
from core.config import Settings
from services.context import Caller, Context
from store.db import Database


def database() -> Database:
    return zolve().db


def settings() -> Settings:
    return zolve().settings


def context() -> Context:
    return zolve().context


def caller() -> Caller:
    return current_principal()
