from django.urls import path

from playground import proxy, views
from playground.api import api

urlpatterns = [
    path("", views.overview, name="overview"),
    path("console", views.console, name="console"),
    path("api/", api.urls),
    path("v1/chat/completions", proxy.chat_completions, name="chat-completions"),
]
