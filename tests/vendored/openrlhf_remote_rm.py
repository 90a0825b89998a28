"""OpenRLHF's previous remote-reward client (one request per batch), vendored to drive ``grpo-host serve`` as it did.

From OpenRLHF (https://github.com/OpenRLHF/OpenRLHF), ``openrlhf/utils/remote_rm_utils.py``
at commit 591b148cc5a829c710078553cc490f178bb4a4af (the last before the file
was removed), Apache License 2.0 (the text is in ``LICENSE-OpenRLHF`` beside
this file).  ``request_api_wrapper`` is unchanged; ``get_rewards`` is
``RemoteRewardModel.get_rewards`` for reward URLs (its ``.py`` branch left
out), with the two Ray indirections marked ``# vendored:`` made direct calls:
``remote_rm_fn_ray.remote(...)`` is ``request_api_wrapper`` run as a Ray task,
and ``ray.get`` collects those tasks' results in order.
"""

import time

import requests
import logging

logger = logging.getLogger("openrlhf")  # vendored: OpenRLHF's init_logger(__name__)


def request_api_wrapper(url, data, try_max_times=5):
    """Synchronous request API wrapper"""
    headers = {
        "Content-Type": "application/json",
    }
    for _ in range(try_max_times):
        try:
            response = requests.post(url=url, json=data, headers=headers, timeout=180)
            response.raise_for_status()  # Raise an HTTPError for bad responses
            response = response.json()
            return response
        except requests.RequestException as e:
            logger.info(f"Request error, please check: {e}")
        except Exception as e:
            logger.info(f"Unexpected error, please check: {e}")
        time.sleep(1)

    raise Exception(f"Request error for {try_max_times} times, returning None. Please check the API server.")


def remote_rm_fn(api_url, queries, prompts, labels):  # vendored: remote_rm_fn_ray without @ray.remote
    return request_api_wrapper(api_url, {"query": queries, "prompts": prompts, "labels": labels})


def get_rewards(remote_rm_url, queries_list, prompts_list, labels_list):  # vendored: RemoteRewardModel.get_rewards
    # Distribute data across different remote reward function servers
    num_servers = len(remote_rm_url)
    batch_size = (len(queries_list) + num_servers - 1) // num_servers
    r_refs = []
    for i in range(num_servers):
        start_idx = i * batch_size
        end_idx = min((i + 1) * batch_size, len(queries_list))
        rm = remote_rm_url[i]
        r = remote_rm_fn(  # vendored: remote_rm_fn_ray.remote(
            rm,
            queries=queries_list[start_idx:end_idx],
            prompts=prompts_list[start_idx:end_idx],
            labels=labels_list[start_idx:end_idx],
        )
        r_refs.append(r)

    return r_refs  # vendored: ray.get(r_refs)
