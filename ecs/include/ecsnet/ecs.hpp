#pragma once

// The whole ECS core in one include.

#include "ecs/capacity.hpp"
#include "ecs/delegate.hpp"
#include "ecs/entity.hpp"
#include "ecs/registry.hpp"
#include "ecs/sigh.hpp"
#include "ecs/sparse_set.hpp"
#include "ecs/storage.hpp"
#include "ecs/type_info.hpp"
#include "ecs/type_list.hpp"
#include "ecs/view.hpp"
#include "ecs/work_queue.hpp"
