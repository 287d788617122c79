from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from labelling.accounts import SignInView
from playground import proxy, views
from playground.api import api
from playground.limits import throttled_login

handler500 = "playground.outage.server_error"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("console", views.console, name="console"),
    path("api/", api.urls),
    path("v1/chat/completions", proxy.chat_completions, name="chat-completions"),
    re_path(r"^(?:api|v1)/", views.not_found, name="api-not-found"),  # after every API path
    path("labelling/reports/", include("labelling.measurement.urls")),
    path("labelling/", include("labelling.urls")),
    path(
        "accounts/login/",
        throttled_login(SignInView.as_view()),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/login/", throttled_login(admin.site.login)),  # before the admin's own
    path("admin/", admin.site.urls),
]
