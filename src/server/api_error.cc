#include "server/api_error.h"

namespace sf::server {

nlohmann::json ApiError::to_json() const {
  nlohmann::json e = {{"message", message}, {"type", type}, {"param", nullptr}, {"code", nullptr}};
  if (!param.empty()) e["param"] = param;
  if (!code.empty()) e["code"] = code;
  return {{"error", e}};
}

ApiError ApiError::bad_request(std::string message, std::string param, std::string code) {
  return {400, std::move(message), "invalid_request_error", std::move(param), std::move(code)};
}

ApiError ApiError::unauthorized(std::string message) {
  return {401, std::move(message), "invalid_request_error", "", "invalid_api_key"};
}

ApiError ApiError::not_found(std::string message, std::string param, std::string code) {
  return {404, std::move(message), "invalid_request_error", std::move(param), std::move(code)};
}

ApiError ApiError::overloaded(std::string message) {
  return {503, std::move(message), "server_error", "", "server_overloaded"};
}

ApiError ApiError::internal(std::string message) { return {500, std::move(message), "server_error", "", ""}; }

}  // namespace sf::server
