from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.list_person_memories_type_type_0 import ListPersonMemoriesTypeType0
from ...models.memory_out import MemoryOut
from ...types import UNSET, Response, Unset


def _get_kwargs(
    person_id: UUID,
    *,
    type_: ListPersonMemoriesTypeType0 | None | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_type_: None | str | Unset
    if isinstance(type_, Unset):
        json_type_ = UNSET
    elif isinstance(type_, ListPersonMemoriesTypeType0):
        json_type_ = type_.value
    else:
        json_type_ = type_
    params["type"] = json_type_

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/people/{person_id}/memories".format(
            person_id=quote(str(person_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | list[MemoryOut] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = MemoryOut.from_dict(response_200_item_data)

            response_200.append(response_200_item)

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
) -> Response[ErrorOut | list[MemoryOut]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    type_: ListPersonMemoriesTypeType0 | None | Unset = UNSET,
) -> Response[ErrorOut | list[MemoryOut]]:
    """Person Memories

     What is remembered about a person, most important first.

    Args:
        person_id (UUID):
        type_ (ListPersonMemoriesTypeType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[MemoryOut]]
    """

    kwargs = _get_kwargs(
        person_id=person_id,
        type_=type_,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    type_: ListPersonMemoriesTypeType0 | None | Unset = UNSET,
) -> ErrorOut | list[MemoryOut] | None:
    """Person Memories

     What is remembered about a person, most important first.

    Args:
        person_id (UUID):
        type_ (ListPersonMemoriesTypeType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[MemoryOut]
    """

    return sync_detailed(
        person_id=person_id,
        client=client,
        type_=type_,
    ).parsed


async def asyncio_detailed(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    type_: ListPersonMemoriesTypeType0 | None | Unset = UNSET,
) -> Response[ErrorOut | list[MemoryOut]]:
    """Person Memories

     What is remembered about a person, most important first.

    Args:
        person_id (UUID):
        type_ (ListPersonMemoriesTypeType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | list[MemoryOut]]
    """

    kwargs = _get_kwargs(
        person_id=person_id,
        type_=type_,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    type_: ListPersonMemoriesTypeType0 | None | Unset = UNSET,
) -> ErrorOut | list[MemoryOut] | None:
    """Person Memories

     What is remembered about a person, most important first.

    Args:
        person_id (UUID):
        type_ (ListPersonMemoriesTypeType0 | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | list[MemoryOut]
    """

    return (
        await asyncio_detailed(
            person_id=person_id,
            client=client,
            type_=type_,
        )
    ).parsed
