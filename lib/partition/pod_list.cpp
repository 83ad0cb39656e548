#include "gpuscale/partition/pod_list.h"

#include <utility>

#include "gpuscale/partition/snapshot.h"

namespace gpuscale::partition {

void PodList::reserve(std::size_t n) {
  pods_.reserve(n);
  owned_.reserve(n);
}

void PodList::push_back(std::shared_ptr<const PodState> pod) {
  pods_.push_back(std::move(pod));
  owned_.push_back(false);
}

void PodList::push_back(PodState pod) {
  pods_.push_back(std::make_shared<const PodState>(std::move(pod)));
  owned_.push_back(true);
}

PodState& PodList::mutableAt(std::size_t i) {
  if (!owned_[i]) {
    pods_[i] = std::make_shared<const PodState>(*pods_[i]);
    owned_[i] = true;
  }
  // The list made this PodState itself (push_back of a value, or the copy above) and shares it with
  // nobody: the object is not const, only the pointer's view of it.
  return const_cast<PodState&>(*pods_[i]);
}

}  // namespace gpuscale::partition
