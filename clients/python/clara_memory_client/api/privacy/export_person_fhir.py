import datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import quote
from uuid import UUID

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_out import ErrorOut
from ...models.export_person_fhir_response import ExportPersonFhirResponse
from ...types import UNSET, Response, Unset


def _get_kwargs(
    person_id: UUID,
    *,
    from_: datetime.date | None | Unset = UNSET,
    to: datetime.date | None | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_from_: None | str | Unset
    if isinstance(from_, Unset):
        json_from_ = UNSET
    elif isinstance(from_, datetime.date):
        json_from_ = from_.isoformat()
    else:
        json_from_ = from_
    params["from"] = json_from_

    json_to: None | str | Unset
    if isinstance(to, Unset):
        json_to = UNSET
    elif isinstance(to, datetime.date):
        json_to = to.isoformat()
    else:
        json_to = to
    params["to"] = json_to

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/people/{person_id}/fhir".format(
            person_id=quote(str(person_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorOut | ExportPersonFhirResponse | None:
    if response.status_code == 200:
        response_200 = ExportPersonFhirResponse.from_dict(response.json())

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
) -> Response[ErrorOut | ExportPersonFhirResponse]:
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
    from_: datetime.date | None | Unset = UNSET,
    to: datetime.date | None | Unset = UNSET,
) -> Response[ErrorOut | ExportPersonFhirResponse]:
    """Person Fhir

     The person over a period as a FHIR R4 Bundle (type collection): the Patient (id and
    names only), weekly upset and conversation counts and the questions asked again as
    Observations, active alerts as Flags, alert e-mails and responses as Communications, the
    clinician report as a DocumentReference. No message text. Audited.

    Args:
        person_id (UUID):
        from_ (datetime.date | None | Unset): First day (YYYY-MM-DD, the person's time).
        to (datetime.date | None | Unset): Last day, included (default: today; from: 30 days
            before).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | ExportPersonFhirResponse]
    """

    kwargs = _get_kwargs(
        person_id=person_id,
        from_=from_,
        to=to,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    from_: datetime.date | None | Unset = UNSET,
    to: datetime.date | None | Unset = UNSET,
) -> ErrorOut | ExportPersonFhirResponse | None:
    """Person Fhir

     The person over a period as a FHIR R4 Bundle (type collection): the Patient (id and
    names only), weekly upset and conversation counts and the questions asked again as
    Observations, active alerts as Flags, alert e-mails and responses as Communications, the
    clinician report as a DocumentReference. No message text. Audited.

    Args:
        person_id (UUID):
        from_ (datetime.date | None | Unset): First day (YYYY-MM-DD, the person's time).
        to (datetime.date | None | Unset): Last day, included (default: today; from: 30 days
            before).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | ExportPersonFhirResponse
    """

    return sync_detailed(
        person_id=person_id,
        client=client,
        from_=from_,
        to=to,
    ).parsed


async def asyncio_detailed(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    from_: datetime.date | None | Unset = UNSET,
    to: datetime.date | None | Unset = UNSET,
) -> Response[ErrorOut | ExportPersonFhirResponse]:
    """Person Fhir

     The person over a period as a FHIR R4 Bundle (type collection): the Patient (id and
    names only), weekly upset and conversation counts and the questions asked again as
    Observations, active alerts as Flags, alert e-mails and responses as Communications, the
    clinician report as a DocumentReference. No message text. Audited.

    Args:
        person_id (UUID):
        from_ (datetime.date | None | Unset): First day (YYYY-MM-DD, the person's time).
        to (datetime.date | None | Unset): Last day, included (default: today; from: 30 days
            before).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorOut | ExportPersonFhirResponse]
    """

    kwargs = _get_kwargs(
        person_id=person_id,
        from_=from_,
        to=to,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    person_id: UUID,
    *,
    client: AuthenticatedClient,
    from_: datetime.date | None | Unset = UNSET,
    to: datetime.date | None | Unset = UNSET,
) -> ErrorOut | ExportPersonFhirResponse | None:
    """Person Fhir

     The person over a period as a FHIR R4 Bundle (type collection): the Patient (id and
    names only), weekly upset and conversation counts and the questions asked again as
    Observations, active alerts as Flags, alert e-mails and responses as Communications, the
    clinician report as a DocumentReference. No message text. Audited.

    Args:
        person_id (UUID):
        from_ (datetime.date | None | Unset): First day (YYYY-MM-DD, the person's time).
        to (datetime.date | None | Unset): Last day, included (default: today; from: 30 days
            before).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorOut | ExportPersonFhirResponse
    """

    return (
        await asyncio_detailed(
            person_id=person_id,
            client=client,
            from_=from_,
            to=to,
        )
    ).parsed
