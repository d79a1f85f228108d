// Sightline: interest management for authoritative multiplayer servers. Include this header.
#pragma once

#include "sightline/client_image.h"
#include "sightline/client_mirror.h"
#include "sightline/handles.h"
#include "sightline/limits.h"
#include "sightline/log.h"
#include "sightline/protocol.h"
#include "sightline/recording.h"
#include "sightline/region_map.h"
#include "sightline/replicator.h"
#include "sightline/serialize.h"
#include "sightline/shard_frame.h"
#include "sightline/status.h"
#include "sightline/stream.h"
#include "sightline/version.h"
#include "sightline/world.h"
#include "sightline/world_def.h"
