from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.deleted_out import DeletedOut
from ...models.error_out import ErrorOut
from ...types import UNSET, Response


def _get_kwargs(
    *,
    namespace: list[str],
    key: str,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_namespace = namespace

    params["namespace"] = json_namespace

    params["key"] = key

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "delete",
        "url": "/api/v1/memories/item",
        "params": params,
    }

    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DeletedOut | ErrorOut | None:
    if response.status_code == 200:
        response_200 = DeletedOut.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorOut.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ErrorOut.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorOut.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorOut.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ErrorOut.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = ErrorOut.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = ErrorOut.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorOut.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ErrorOut.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DeletedOut | ErrorOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    namespace: list[str],
    key: str,
) -> Response[DeletedOut | ErrorOut]:
    """Delete Memory

     Forget (namespace, key) with its history; 404 if nothing was there.

    Args:
        namespace (list[str]):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeletedOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        namespace=namespace,
        key=key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    namespace: list[str],
    key: str,
) -> DeletedOut | ErrorOut | None:
    """Delete Memory

     Forget (namespace, key) with its history; 404 if nothing was there.

    Args:
        namespace (list[str]):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeletedOut | ErrorOut
    """

    return sync_detailed(
        client=client,
        namespace=namespace,
        key=key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    namespace: list[str],
    key: str,
) -> Response[DeletedOut | ErrorOut]:
    """Delete Memory

     Forget (namespace, key) with its history; 404 if nothing was there.

    Args:
        namespace (list[str]):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeletedOut | ErrorOut]
    """

    kwargs = _get_kwargs(
        namespace=namespace,
        key=key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    namespace: list[str],
    key: str,
) -> DeletedOut | ErrorOut | None:
    """Delete Memory

     Forget (namespace, key) with its history; 404 if nothing was there.

    Args:
        namespace (list[str]):
        key (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeletedOut | ErrorOut
    """

    return (
        await asyncio_detailed(
            client=client,
            namespace=namespace,
            key=key,
        )
    ).parsed
