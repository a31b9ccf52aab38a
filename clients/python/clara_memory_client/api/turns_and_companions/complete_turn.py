from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.turn_complete_in import TurnCompleteIn
from ...models.turn_complete_out import TurnCompleteOut
from ...types import Response


def _get_kwargs(
    session_id: UUID,
    turn_id: UUID,
    *,
    body: TurnCompleteIn,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/sessions/{session_id}/turns/{turn_id}/complete".format(
            session_id=quote(str(session_id), safe=""),
            turn_id=quote(str(turn_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | TurnCompleteOut | None:
    if response.status_code == 200:
        response_200 = TurnCompleteOut.from_dict(response.json())

        return response_200

    if response.status_code == 201:
        response_201 = TurnCompleteOut.from_dict(response.json())

        return response_201

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
) -> Response[ErrorOut | TurnCompleteOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    session_id: UUID,
    turn_id: UUID,
    *,
    client: AuthenticatedClient,
    body: TurnCompleteIn,
) -> Response[ErrorOut | TurnCompleteOut]:
    """Turn Complete

     Store the turn's exchange once (201; again: 200) and free the person for the next turn.

    Args:
        session_id (UUID):
        turn_id (UUID):
        body (TurnCompleteIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TurnCompleteOut]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        turn_id=turn_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    session_id: UUID,
    turn_id: UUID,
    *,
    client: AuthenticatedClient,
    body: TurnCompleteIn,
) -> ErrorOut | TurnCompleteOut | None:
    """Turn Complete

     Store the turn's exchange once (201; again: 200) and free the person for the next turn.

    Args:
        session_id (UUID):
        turn_id (UUID):
        body (TurnCompleteIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TurnCompleteOut
    """

    return sync_detailed(
        session_id=session_id,
        turn_id=turn_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    session_id: UUID,
    turn_id: UUID,
    *,
    client: AuthenticatedClient,
    body: TurnCompleteIn,
) -> Response[ErrorOut | TurnCompleteOut]:
    """Turn Complete

     Store the turn's exchange once (201; again: 200) and free the person for the next turn.

    Args:
        session_id (UUID):
        turn_id (UUID):
        body (TurnCompleteIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | TurnCompleteOut]
    """

    kwargs = _get_kwargs(
        session_id=session_id,
        turn_id=turn_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    session_id: UUID,
    turn_id: UUID,
    *,
    client: AuthenticatedClient,
    body: TurnCompleteIn,
) -> ErrorOut | TurnCompleteOut | None:
    """Turn Complete

     Store the turn's exchange once (201; again: 200) and free the person for the next turn.

    Args:
        session_id (UUID):
        turn_id (UUID):
        body (TurnCompleteIn):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | TurnCompleteOut
    """

    return (
        await asyncio_detailed(
            session_id=session_id,
            turn_id=turn_id,
            client=client,
            body=body,
        )
    ).parsed
