// Sightline: interest management for authoritative multiplayer servers. Include this header.
#pragma once

#include "sightline/handles.h"
#include "sightline/status.h"
#include "sightline/stream.h"
#include "sightline/version.h"
#include "sightline/world.h"
#include "sightline/world_def.h"
